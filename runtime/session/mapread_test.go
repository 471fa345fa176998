package session

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/internal/testkit"
	"github.com/skbtrace/skbtrace/internal/testkit/compiletest"
	"github.com/skbtrace/skbtrace/runtime/kernel"
)

// TestReadMap runs a script on three getppid calls of this process and
// reads each map with ReadMap while the session runs: keys each formatted
// as printed and whole, counts, sums, avg's count and total, a max,
// histogram buckets, a plain value's text; keyless aggregations packed in
// a shared map (more than 16) read from their slot.
func TestReadMap(t *testing.T) {
	spec := testkit.KernelBTF(t)
	if !kernel.TracepointExists("syscalls", "sys_enter_getppid") {
		t.Skip("no syscalls:sys_enter_getppid tracepoint (CONFIG_FTRACE_SYSCALLS off)")
	}
	pid := strconv.Itoa(unix.Getpid())
	var pack strings.Builder
	for i := range 17 {
		fmt.Fprintf(&pack, "@k%d = count(); ", i)
	}
	text := `tracepoint:syscalls:sys_enter_getppid /pid == ` + pid + `/ {
	@n[comm, 7] = count(); @s = sum(3); @avg[pid] = avg(10); @mx = max(9);
	@h = hist(5); @l = lhist(42, 0, 100, 10); @v["x"] = comm;
	` + pack.String() + `}`
	_, out := compiletest.Compile(t, text, compiletest.KernelOptions(spec), codegen.Options{})
	s, err := Start(out, io.Discard, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for range 3 {
		unix.Getppid()
	}
	comm, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Fatal(err)
	}
	self := strings.TrimSpace(string(comm))
	for _, c := range []struct {
		name string
		want []MapEntry
	}{
		{"n", []MapEntry{{Keys: []string{self, "7"}, Key: "[" + self + ", 7]", Value: 3}}},
		{"s", []MapEntry{{Value: 9}}},
		{"avg", []MapEntry{{Keys: []string{pid}, Key: "[" + pid + "]", Value: 10, Count: 3, Sum: 30}}},
		{"mx", []MapEntry{{Value: 9}}},
		{"h", []MapEntry{{Value: 3, Bucket: 4}}},
		{"l", []MapEntry{{Value: 3, Bucket: 5}}},
		{"v", []MapEntry{{Keys: []string{"x"}, Key: "[x]", Text: self}}},
		{"k16", []MapEntry{{Value: 3}}},
	} {
		l := out.Layout(c.name)
		got, err := s.ReadMap(l)
		if err != nil {
			t.Fatalf("@%s: %v", c.name, err)
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("@%s: %+v\nwant %+v", c.name, got, c.want)
		}
	}
	if l := out.Layout("s"); l.Slot == nil {
		t.Error("@s is not packed: the packed read is not tested")
	}
	if lo, hi := out.Layout("l").Bucket(5); lo != 40 || hi != 50 {
		t.Errorf("lhist(42, 0, 100, 10)'s bucket is [%d, %d), want [40, 50)", lo, hi)
	}
	s.Close()
	if _, err := s.ReadMap(out.Layout("n")); err == nil {
		t.Error("ReadMap after Close: no error")
	}
}

// TestWalkMapBatchAndIter: reading a hash and a per-CPU hash of 1,000
// elements in batches (more than one, and past a bucket) gives what
// reading them element by element gives.
func TestWalkMapBatchAndIter(t *testing.T) {
	for _, typ := range []ebpf.MapType{ebpf.Hash, ebpf.PerCPUHash} {
		m, err := ebpf.NewMap(&ebpf.MapSpec{Type: typ, KeySize: 16, ValueSize: 16, MaxEntries: 2048})
		if err != nil {
			t.Skipf("create a %s map: %v", typ, err)
		}
		defer m.Close()
		cpus, err := ebpf.PossibleCPU()
		if err != nil {
			t.Fatal(err)
		}
		for i := range uint64(1000) {
			key := [2]uint64{i, ^i}
			var err error
			if typ == ebpf.PerCPUHash {
				vals := make([][2]uint64, cpus)
				for c := range vals {
					vals[c] = [2]uint64{i * 10, uint64(c)}
				}
				err = m.Put(key, vals)
			} else {
				err = m.Put(key, [2]uint64{i * 10, 1})
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		read := func(walk func(*ebpf.Map, func([]byte, [][]byte)) error) []string {
			var out []string
			err := walk(m, func(key []byte, perCPU [][]byte) {
				out = append(out, fmt.Sprintf("%x=%x", key, perCPU))
			})
			if err != nil {
				t.Fatalf("%s: %v", typ, err)
			}
			slices.Sort(out)
			return out
		}
		batch, iter := read(walkBatch), read(walkIter)
		if len(batch) != 1000 || !slices.Equal(batch, iter) {
			t.Errorf("%s: %d elements in batches, %d one by one, or they differ", typ, len(batch), len(iter))
		}
	}
}

// BenchmarkWalkMap reads a per-CPU hash of 10,240 elements (a full map)
// in batches and element by element: what a print(@m) or a metrics
// scrape of a large map costs.
func BenchmarkWalkMap(b *testing.B) {
	m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.PerCPUHash, KeySize: 16, ValueSize: 8, MaxEntries: 10240})
	if err != nil {
		b.Skipf("create a map: %v", err)
	}
	defer m.Close()
	cpus, err := ebpf.PossibleCPU()
	if err != nil {
		b.Fatal(err)
	}
	for i := range uint64(10240) {
		if err := m.Put([2]uint64{i, i}, make([]uint64, cpus)); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct {
		name string
		walk func(*ebpf.Map, func([]byte, [][]byte)) error
	}{{"batch", walkBatch}, {"iterate", walkIter}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				n := 0
				if err := c.walk(m, func([]byte, [][]byte) { n++ }); err != nil || n != 10240 {
					b.Fatalf("%d elements: %v", n, err)
				}
			}
		})
	}
}
