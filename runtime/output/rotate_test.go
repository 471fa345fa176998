package output

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skbtrace/skbtrace/codegen"
)

// TestRotateNames names files as tcpdump does: FILE, FILE1, FILE2 without
// -W; FILE0 ... FILE{N-1}, padded to N-1's digits, round again with -W N;
// with -G, the FILE's strftime conversions at each file's time.
func TestRotateNames(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 17, 4, 5, 0, time.Local)
	type step struct {
		after  time.Duration
		bySize bool
	}
	sizes := func(n int) []step {
		s := make([]step, n)
		for i := range s {
			s[i] = step{0, true}
		}
		return s
	}
	for _, c := range []struct {
		name  string
		names fileNames
		steps []step
		want  string
	}{
		{"-C", fileNames{base: "f", sized: true}, sizes(3), "f f1 f2 f3"},
		{"-C -W 3", fileNames{base: "f", count: 3, sized: true}, sizes(4), "f0 f1 f2 f0 f1"},
		{"-C -W 10", fileNames{base: "f", count: 10, sized: true}, sizes(10), "f0 f1 f2 f3 f4 f5 f6 f7 f8 f9 f0"},
		{"-C -W 11", fileNames{base: "f", count: 11, sized: true}, sizes(2), "f00 f01 f02"},
		{"-C -W 1", fileNames{base: "f", count: 1, sized: true}, sizes(2), "f f f"},
		{"-G, no conversion", fileNames{base: "f", timed: true}, []step{{time.Second, false}, {time.Second, false}}, "f f1 f2"},
		{"-G", fileNames{base: "f-%H%M%S", timed: true}, []step{{time.Second, false}, {time.Second, false}}, "f-170405 f-170406 f-170407"},
		{"-G -W 2", fileNames{base: "f-%H%M%S", count: 2, timed: true}, []step{{time.Second, false}}, "f-170405 f-170406"},
		{"-G -C", fileNames{base: "f-%H%M%S", timed: true, sized: true}, []step{{0, true}, {0, true}, {time.Second, false}, {0, true}}, "f-170405 f-1704051 f-1704052 f-170406 f-1704061"},
		{"-G, the same second", fileNames{base: "f-%H%M%S", timed: true}, []step{{0, false}}, "f-170405 f-1704051"},
	} {
		at := t0
		got := []string{c.names.first(at)}
		for _, s := range c.steps {
			at = at.Add(s.after)
			got = append(got, c.names.next(at, s.bySize))
		}
		if g := strings.Join(got, " "); g != c.want {
			t.Errorf("%s: %s, want %s", c.name, g, c.want)
		}
	}
}

// rotateRecords writes n records of the given size to r, each whole,
// rotating where Due says so, as the pcapng sink does.
func rotateRecords(t *testing.T, r *Rotator, n, size int) {
	t.Helper()
	for i := range n {
		rec := fmt.Sprintf("%0*d\n", size-1, i)
		if r.Due(0) {
			if err := r.Rotate(); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := r.Write([]byte(rec)); err != nil {
			t.Fatal(err)
		}
	}
}

// readRecords reads the files back: each one's records, in order.
func readRecords(t *testing.T, files []string) [][]string {
	t.Helper()
	var out [][]string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.Fields(string(b)))
	}
	return out
}

// TestRotateSize fills files up to -C's size: each holds whole records,
// at least Size bytes but the last, and less than one record past it;
// without -W every record is in some file once, in order; with -W 3 the
// ring keeps three files on disk, the newest records, and says how many
// went.
func TestRotateSize(t *testing.T) {
	for _, count := range []int{0, 3} {
		dir := t.TempDir()
		base := filepath.Join(dir, "out")
		r, err := NewRotator(base, Rotation{Size: 250, Count: count})
		if err != nil {
			t.Fatal(err)
		}
		const n, size = 100, 40 // 4000 bytes: 16 files of 7 records (280 bytes)
		rotateRecords(t, r, n, size)
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		kept, removed := r.Files()
		onDisk, _ := filepath.Glob(base + "*")
		slices.Sort(onDisk)
		sortedKept := slices.Sorted(slices.Values(kept))
		if !slices.Equal(onDisk, sortedKept) {
			t.Errorf("-W %d: on disk %v, kept %v", count, onDisk, kept)
		}
		files := readRecords(t, kept)
		var all []string
		for i, recs := range files {
			bytes := len(recs) * size
			if i < len(files)-1 && (bytes < 250 || bytes >= 250+size) {
				t.Errorf("-W %d: %s holds %d bytes, want 250 to %d", count, kept[i], bytes, 250+size-1)
			}
			all = append(all, recs...)
		}
		wantFiles := (n + 6) / 7
		if count > 0 {
			wantFiles = count
		}
		if len(kept) != wantFiles || len(kept)+removed != (n+6)/7 {
			t.Errorf("-W %d: %d files kept, %d removed, want %d kept of %d", count, len(kept), removed, wantFiles, (n+6)/7)
		}
		// The records kept are the last ones, in order, none twice.
		first := n - len(all)
		for i, rec := range all {
			if want := fmt.Sprintf("%0*d", size-1, first+i); rec != want {
				t.Fatalf("-W %d: record %d is %s, want %s", count, i, rec, want)
			}
		}
		if count == 0 && len(all) != n {
			t.Errorf("without -W: %d records in the files, want %d", len(all), n)
		}
	}
}

// fakeClock is a clock that tests move.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// TestRotateTime starts a new file at the first record -G's interval
// after the current one opened, and never an empty one.
func TestRotateTime(t *testing.T) {
	clock := &fakeClock{time.Date(2026, 11, 27, 17, 0, 0, 0, time.Local)}
	base := filepath.Join(t.TempDir(), "t-%H%M%S")
	r, err := newRotator(base, Rotation{Every: 10 * time.Second}, clock.now)
	if err != nil {
		t.Fatal(err)
	}
	write := func(s string) {
		if r.Due(0) {
			if err := r.Rotate(); err != nil {
				t.Fatal(err)
			}
		}
		r.Write([]byte(s + "\n"))
	}
	write("a")
	clock.t = clock.t.Add(9 * time.Second)
	write("b")
	clock.t = clock.t.Add(time.Second)
	write("c")
	clock.t = clock.t.Add(time.Minute) // nothing written: no file
	write("d")
	r.Close()
	kept, _ := r.Files()
	got := readRecords(t, kept)
	want := [][]string{{"a", "b"}, {"c"}, {"d"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("files hold %v, want %v", got, want)
	}
	for i, suffix := range []string{"t-170000", "t-170010", "t-170110"} {
		if filepath.Base(kept[i]) != suffix {
			t.Errorf("file %d is %s, want %s", i, filepath.Base(kept[i]), suffix)
		}
	}
}

// TestRotateLineEnd keeps a line whole: with LineEnd, a file that ends in
// the middle of a line (a printf without its newline yet) is not rotated.
func TestRotateLineEnd(t *testing.T) {
	r, err := NewRotator(filepath.Join(t.TempDir(), "l"), Rotation{Size: 4, LineEnd: true})
	if err != nil {
		t.Fatal(err)
	}
	r.Write([]byte("abcdef"))
	if rotated, err := r.RotateIfDue(); rotated || err != nil {
		t.Errorf("rotated in the middle of a line (%v)", err)
	}
	r.Write([]byte("gh\n"))
	if rotated, err := r.RotateIfDue(); !rotated || err != nil {
		t.Errorf("did not rotate after the line (%v)", err)
	}
	r.Close()
	if kept, _ := r.Files(); len(kept) != 2 {
		t.Errorf("files %v", kept)
	}
}

// pcapngFile is what one file of blocks holds: its block types, and each
// packet block's interface name.
type pcapngFile struct {
	types  []uint32
	ifaces []string
}

// readPcapng walks a file's blocks alone: a section header first,
// every packet block's interface described before it in the file.
func readPcapng(t *testing.T, name string) pcapngFile {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	var f pcapngFile
	var names []string
	for len(b) > 0 {
		typ, n := le.Uint32(b), le.Uint32(b[4:])
		if n < 12 || n%4 != 0 || int(n) > len(b) || le.Uint32(b[n-4:]) != n {
			t.Fatalf("%s: bad block length %d", name, n)
		}
		if len(f.types) == 0 && typ != blockSHB {
			t.Fatalf("%s starts with block %#x, not a section header", name, typ)
		}
		f.types = append(f.types, typ)
		body := b[8 : n-4]
		switch typ {
		case blockIDB:
			opt := body[8:] // if_name first
			names = append(names, string(opt[4:4+le.Uint16(opt[2:])]))
		case blockEPB:
			id := le.Uint32(body)
			if int(id) >= len(names) {
				t.Fatalf("%s: a packet on interface %d of %d described", name, id, len(names))
			}
			f.ifaces = append(f.ifaces, names[id])
		}
		b = b[n:]
	}
	return f
}

// TestPcapngRotate writes frames on two devices to a rotating pcapng
// sink: each file a section of its own, each device described in each
// file its frames are in; every frame in one file, whole, none lost.
func TestPcapngRotate(t *testing.T) {
	base := filepath.Join(t.TempDir(), "cap.pcapng")
	r, err := NewRotator(base, Rotation{Size: 2000})
	if err != nil {
		t.Fatal(err)
	}
	pw, err := newPcapngWriter(r, 256, time.Unix(1_700_000_000, 0))
	if err != nil {
		t.Fatal(err)
	}
	const n = 100
	for i := range n {
		dev := []string{"eth0", "veth1"}[i%3/2] // eth0 eth0 veth1 ...
		if err := pw.frame(captureRecord(dev, 100+i, 0), "ip_rcv"); err != nil {
			t.Fatal(err)
		}
	}
	if err := pw.Flush(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	kept, removed := r.Files()
	if len(kept) < 5 || removed != 0 {
		t.Fatalf("%d files, %d removed", len(kept), removed)
	}
	frames := 0
	for i, name := range kept {
		f := readPcapng(t, name)
		frames += len(f.ifaces)
		if len(f.ifaces) == 0 {
			t.Errorf("%s: no frame", name)
		}
		if st, _ := os.Stat(name); i < len(kept)-1 && st.Size() < 2000 {
			t.Errorf("%s: %d bytes, rotated before 2000", name, st.Size())
		}
		if slices.Index(f.types, blockSHB) != 0 || slices.Index(f.types[1:], blockSHB) >= 0 {
			t.Errorf("%s: blocks %x, want one section", name, f.types)
		}
	}
	if frames != n {
		t.Errorf("%d frames in the files, want %d", frames, n)
	}
}

// TestPrinterRotate prints JSON records through the printer to a rotating
// output: every line of every file parses, none is split or lost.
func TestPrinterRotate(t *testing.T) {
	events := compilePrinter(t, `tracepoint:skb:kfree_skb { print(len, dev) }`)
	base := filepath.Join(t.TempDir(), "out.json")
	r, err := NewRotator(base, Rotation{Size: 4096, LineEnd: true})
	if err != nil {
		t.Fatal(err)
	}
	p := testPrinter(r, events, true)
	const n = 1000
	for i := range n {
		if err := p.record(sampleRecord(events[0], i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.flush(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	kept, _ := r.Files()
	lines := 0
	for _, name := range kept {
		b, _ := os.ReadFile(name)
		if len(b) > 4096+512 {
			t.Errorf("%s: %d bytes for -C of 4096", name, len(b))
		}
		for _, l := range bytes.SplitAfter(b, []byte("\n")) {
			if len(l) == 0 {
				continue
			}
			var v map[string]any
			if err := json.Unmarshal(l, &v); err != nil || l[len(l)-1] != '\n' {
				t.Fatalf("%s: line %q: %v", name, l, err)
			}
			lines++
		}
	}
	if len(kept) < 5 || lines != n {
		t.Errorf("%d lines in %d files, want %d in several", lines, len(kept), n)
	}
}

// benchDir is a directory for a benchmark's files: in /dev/shm where it
// is a tmpfs, so that the disk's writeback does not drown what is measured.
func benchDir(b *testing.B) string {
	dir, err := os.MkdirTemp("/dev/shm", "skbtrace-rotate-")
	if err != nil {
		return b.TempDir()
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// BenchmarkRotate writes capture() frames (-w) and JSON events (-o) to a
// file (in /dev/shm: benchDir): alone, rotated by -C 1m, and in a ring of
// -W 3: the user-space cost per record of rotating.
func BenchmarkRotate(b *testing.B) {
	for _, c := range []struct {
		name string
		rot  Rotation
	}{{"file", Rotation{}}, {"C=1m", Rotation{Size: 1 << 20}}, {"C=1m,W=3", Rotation{Size: 1 << 20, Count: 3}}} {
		for _, sink := range []string{"pcapng", "json"} {
			b.Run(sink+"/"+c.name, func(b *testing.B) {
				name := filepath.Join(benchDir(b), "out")
				var w interface {
					Write([]byte) (int, error)
					Close() error
				}
				var err error
				if c.rot.On() {
					c.rot.LineEnd = sink == "json"
					w, err = NewRotator(name, c.rot)
				} else {
					w, err = os.Create(name)
				}
				if err != nil {
					b.Fatal(err)
				}
				defer w.Close()
				var p *Printer
				var rec []byte
				if sink == "pcapng" {
					ev := &codegen.Event{Kind: codegen.EventCapture, Size: codegen.CaptureHead}
					p = testPrinter(io.Discard, []*codegen.Event{ev}, false)
					if p.pcap, err = newPcapngWriter(w, codegen.DefaultSnaplen, time.Now()); err != nil {
						b.Fatal(err)
					}
					p.funcs[0xffffffff81000000] = "ip_rcv"
					rec = captureRecord("eth0", 142, 0)
					binary.LittleEndian.PutUint64(rec[codegen.PrintFunc:], 0xffffffff81000000)
				} else {
					events := compilePrinter(b, `tracepoint:skb:kfree_skb { print(len, dev) }`)
					p = testPrinter(w, events, true)
					rec = sampleRecord(events[0], 1)
				}
				b.ReportAllocs()
				for b.Loop() {
					if err := p.record(rec); err != nil {
						b.Fatal(err)
					}
				}
				if err := p.flush(); err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}

// TestRotateError: where the next file cannot be made, the rotation and
// every write after it fail with why.
func TestRotateError(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sub")
	os.Mkdir(dir, 0o755)
	r, err := NewRotator(filepath.Join(dir, "f"), Rotation{Size: 1})
	if err != nil {
		t.Fatal(err)
	}
	r.Write([]byte("x\n"))
	os.RemoveAll(dir)
	if _, err := r.RotateIfDue(); err == nil || !strings.Contains(err.Error(), "rotate: open ") {
		t.Errorf("rotating into a removed directory: %v", err)
	}
	if _, err := r.Write([]byte("y\n")); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("a write after a failed rotation: %v", err)
	}
}
