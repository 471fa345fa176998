package output

import (
	"bytes"
	"encoding/binary"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/internal/golden"
	"github.com/skbtrace/skbtrace/internal/testkit/compiletest"
	"github.com/skbtrace/skbtrace/lang/types"
)

// printerScript has a print and printfs of every kind of value the
// printer formats, so that its golden output pins each format.
const printerScript = `tracepoint:skb:kfree_skb {
	print(len, dev, saddr, daddr, sport, dport, mark, reason, comm, l4proto, proto, pkt_type, tcpflags, ipver, netns, hash, skb, kstack);
	printf("%-16s %5u|%-5d|%05d %x %X %o %p %c %s %s %s\n", dev, len, sport, dport, mark, hash, len, skb, 65, saddr, reason, l4proto);
	printf("plain %d%%\n", len)
}`

// compilePrinter compiles a script against the kernel's BTF, for its events.
func compilePrinter(tb testing.TB, text string) []*codegen.Event {
	tb.Helper()
	_, out := compiletest.Compile(tb, text, check.Options{}, codegen.Options{})
	return out.Events
}

// sampleRecord makes a record of an event whose values vary with seed:
// IPv4 and IPv6 addresses, strings that JSON must escape, negative
// numbers, reasons with and without a name.
func sampleRecord(ev *codegen.Event, seed int) []byte {
	b := make([]byte, ev.Size)
	le := binary.LittleEndian
	le.PutUint64(b, uint64(ev.ID))
	if ev.Kind == codegen.EventPrint {
		le.PutUint64(b[codegen.PrintTime:], uint64(seed)*1234567891+987654321)
		le.PutUint64(b[codegen.PrintCPU:], uint64(seed%3))
		le.PutUint64(b[codegen.PrintSkb:], 0xffff888100000000+uint64(seed)*0x100)
	}
	for i, a := range ev.Args {
		raw := b[a.Offset : a.Offset+a.Size]
		switch a.Type.Kind {
		case types.String:
			copy(raw, []string{"eth0", `a"b<c>&\`, "veth-x\x01y", "", "bad\xffutf8\u2028"}[(seed+i)%5])
		case types.Addr:
			if (seed+i)%2 == 0 {
				copy(raw, []byte{10, 0, byte(seed), byte(i)})
				raw[16] = 4
			} else {
				copy(raw, []byte{0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, byte(seed), byte(i)})
				raw[16] = 6
			}
		case types.Stack:
			le.PutUint64(raw, ^uint64(16)) // -17: -EEXIST
		default:
			v := uint64(seed*1000 + i*17)
			switch seed % 4 {
			case 1:
				v = ^uint64(0) - uint64(i)
			case 2:
				v = uint64(i % 3)
			}
			le.PutUint64(raw, v)
		}
	}
	return b
}

// testPrinter is a printer whose times are in UTC from a fixed boot, in
// the text or JSON format.
func testPrinter(w io.Writer, events []*codegen.Event, json bool) *Printer {
	if json {
		return testPrinterFormat(w, events, "json")
	}
	return testPrinterFormat(w, events, "text")
}

// testPrinterFormat is testPrinter in a format of the registry.
func testPrinterFormat(w io.Writer, events []*codegen.Event, format string) *Printer {
	f := NewValues()
	f.boot = time.Date(2026, 11, 23, 7, 0, 0, 0, time.UTC)
	p, err := New(w, events, Config{Format: format, Values: f})
	if err != nil {
		panic(err)
	}
	return p
}

func printAll(t *testing.T, json bool) []byte {
	events := compilePrinter(t, printerScript)
	var out bytes.Buffer
	p := testPrinter(&out, events, json)
	for seed := range 8 {
		for _, ev := range events {
			if err := p.record(sampleRecord(ev, seed)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := p.flush(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func TestPrinterText(t *testing.T) { golden.Compare(t, "testdata/printer.txt", printAll(t, false)) }
func TestPrinterJSON(t *testing.T) { golden.Compare(t, "testdata/printer.json", printAll(t, true)) }

// TestFormatsRegistry prints one record through each format of the
// registry: text and bpftrace-events as pwru's columns, json as an event
// object, bpftrace and bpftrace-json as bpftrace prints a value,
// timeline and graph keeping it in a block until flushed; an unknown name
// is an error that lists the formats.
func TestFormatsRegistry(t *testing.T) {
	events := compilePrinter(t, `tracepoint:skb:kfree_skb { print(len) }`)
	rec := sampleRecord(events[0], 0)
	for _, name := range Formats() {
		p := testPrinterFormat(nil, events, name)
		if err := p.record(rec); err != nil {
			t.Fatal(err)
		}
		got := string(p.buf)
		grouped := strings.HasPrefix(name, "timeline") || strings.HasPrefix(name, "graph")
		n := strconv.Itoa(int(binary.LittleEndian.Uint64(rec[events[0].Args[0].Offset:])))
		switch name {
		case "bpftrace":
			// A bpftrace program's print(len): the value alone.
			if got != n+"\n" {
				t.Errorf("%s: %q, want %q", name, got, n+"\n")
			}
			continue
		case "bpftrace-json":
			if want := `{"type": "value", "data": ` + n + "}\n"; got != want {
				t.Errorf("%s: %q, want %q", name, got, want)
			}
			continue
		}
		switch {
		case grouped && got != "":
			t.Errorf("%s: a hop printed before its block ends: %q", name, got)
		case !grouped && strings.HasSuffix(name, "json") != strings.HasPrefix(got, `{"cpu":`):
			t.Errorf("%s: %q", name, got)
		case !grouped && !strings.Contains(got, "len="+strconv.Itoa(int(binary.LittleEndian.Uint64(rec[events[0].Args[0].Offset:])))) && !strings.Contains(got, `"len":`):
			t.Errorf("%s: no len in %q", name, got)
		}
		flushed := string(p.f.Flush(nil, time.Time{}, true))
		if grouped && !strings.Contains(flushed, "kfree_skb") {
			t.Errorf("%s: the flushed block %q has no kfree_skb hop", name, flushed)
		}
	}
	if _, err := New(nil, events, Config{Format: "yaml"}); err == nil || !strings.Contains(err.Error(), "timeline-json") {
		t.Errorf("format yaml: %v", err)
	}
}
