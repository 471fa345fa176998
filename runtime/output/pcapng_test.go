package output

import (
	"bytes"
	"encoding/binary"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/skbtrace/skbtrace/codegen"
)

// captureRecord is a capture() record of an n-byte packet on dev, with the
// synthesized-header flag synth.
func captureRecord(dev string, n int, synth uint64) []byte {
	b := make([]byte, codegen.CaptureHead+n)
	le := binary.LittleEndian
	le.PutUint64(b[codegen.PrintTime:], 1_000_000_123)
	le.PutUint64(b[codegen.PrintSkb:], 0xffff888100000100)
	le.PutUint64(b[codegen.CaptureMark:], 0xbeef)
	le.PutUint64(b[codegen.CaptureNetns:], 4026531840)
	le.PutUint64(b[codegen.CaptureIfindex:], 7)
	le.PutUint64(b[codegen.CaptureOrigLen:], uint64(n+100))
	le.PutUint64(b[codegen.CaptureLen:], uint64(n))
	le.PutUint64(b[codegen.CaptureSynth:], synth)
	copy(b[codegen.CaptureDev:], dev)
	for i := range n {
		b[codegen.CaptureHead+i] = byte(i)
	}
	return b
}

// TestPcapngBlocks checks the blocks the writer makes: a section header, one
// interface block per device (named, nanosecond timestamps), and a packet
// block per frame with its lengths, bytes (a synthesized Ethernet header
// where flagged) and comment.
func TestPcapngBlocks(t *testing.T) {
	var out bytes.Buffer
	boot := time.Unix(1_700_000_000, 0)
	pw, err := newPcapngWriter(&out, 256, boot)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		dev   string
		synth uint64
	}{{"eth0", 0}, {"eth0", 0x10000 | 0x0800}, {"veth1", 0}} {
		if err := pw.frame(captureRecord(r.dev, 30, r.synth), "ip_rcv"); err != nil {
			t.Fatal(err)
		}
	}
	pw.Flush()
	le := binary.LittleEndian
	var types []uint32
	var epbs [][]byte
	for b := out.Bytes(); len(b) > 0; {
		typ, n := le.Uint32(b), le.Uint32(b[4:])
		if n%4 != 0 || int(n) > len(b) || le.Uint32(b[n-4:]) != n {
			t.Fatalf("bad block length %d", n)
		}
		types = append(types, typ)
		if typ == blockEPB {
			epbs = append(epbs, b[8:n-4])
		}
		b = b[n:]
	}
	if want := []uint32{blockSHB, blockIDB, blockEPB, blockEPB, blockIDB, blockEPB}; !slices.Equal(types, want) {
		t.Fatalf("blocks %x, want %x", types, want)
	}
	for i, e := range epbs {
		iface, caplen, orig := le.Uint32(e), le.Uint32(e[12:]), le.Uint32(e[16:])
		ts := uint64(le.Uint32(e[4:]))<<32 | uint64(le.Uint32(e[8:]))
		if want := []uint32{0, 0, 1}[i]; iface != want || caplen != 30 || orig != 130 || ts != uint64(boot.UnixNano())+1_000_000_123 {
			t.Errorf("frame %d: interface %d, lengths %d/%d, time %d", i, iface, caplen, orig, ts)
		}
		data := e[20 : 20+30]
		wantHead := []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}
		if i == 1 {
			wantHead = []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8, 0}
		}
		if !bytes.Equal(data[:14], wantHead) || data[29] != 29 {
			t.Errorf("frame %d bytes % x", i, data)
		}
		opts := e[20+32:]
		comment := string(opts[4 : 4+le.Uint16(opts[2:])])
		if le.Uint16(opts) != optComment || comment != "ip_rcv skb=0xffff888100000100 mark=0xbeef netns=4026531840" {
			t.Errorf("frame %d comment %q", i, comment)
		}
	}
}

// BenchmarkPrinterCapture writes capture() records of -w's default snap
// length as pcapng frames to a writer that discards them: the user-space
// cost per frame.
func BenchmarkPrinterCapture(b *testing.B) {
	pw, err := newPcapngWriter(io.Discard, codegen.DefaultSnaplen, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	ev := &codegen.Event{Kind: codegen.EventCapture, Size: codegen.CaptureHead}
	p := testPrinter(io.Discard, []*codegen.Event{ev}, false)
	p.pcap = pw
	p.funcs[0xffffffff81000000] = "ip_rcv"
	rec := captureRecord("eth0", codegen.DefaultSnaplen, 0)
	binary.LittleEndian.PutUint64(rec[codegen.PrintFunc:], 0xffffffff81000000)
	b.ReportAllocs()
	for b.Loop() {
		if err := p.record(rec); err != nil {
			b.Fatal(err)
		}
	}
	p.flush()
}
