package session

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/internal/testkit/compiletest"
)

// TestLoadUnmergesRefused: where the kernel refuses a merged program,
// LoadWith loads its probes' own programs in its place, which run as the
// merged one would have. (The merged program is broken by hand past its
// probes' code, as the verifier could refuse one too long to walk.)
func TestLoadUnmergesRefused(t *testing.T) {
	// (The tracepoint keeps it from being a begin-only script, which ends
	// once BEGIN ran: a fourth, implicit probe.)
	_, out := compiletest.Compile(t, `
BEGIN { @x = 1 }
BEGIN { @x = @x * 10 + 2 }
BEGIN { @x = @x * 10 + 3 }
tracepoint:skb:kfree_skb { @y = 1 }
`, check.Options{}, codegen.Options{})
	var m *codegen.Program
	for _, p := range out.Programs {
		if p.Attach.Kind == codegen.AttachBegin {
			m = p
		}
	}
	if m == nil || len(m.Merged) != 3 {
		t.Fatalf("%d programs, want BEGIN's merged", len(out.Programs))
	}
	insns := m.Prog.Instructions
	for i, ins := range insns {
		if ins.Symbol() == m.Name+":end" {
			// R5 is not set there: the verifier refuses the program.
			insns[i] = asm.Mov.Reg(asm.R0, asm.R5).WithSymbol(ins.Symbol())
		}
	}
	coll, err := LoadWith(out, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer coll.Close()
	var names []string
	for _, p := range out.Programs {
		if p.Attach.Kind != codegen.AttachBegin {
			continue
		}
		names = append(names, p.Name)
		if _, err := coll.Programs[p.Name].Run(&ebpf.RunOptions{Context: make([]uint64, 1)}); err != nil {
			t.Fatal(err)
		}
	}
	if got := strings.Join(names, " "); got != "p0_0 p1_0 p2_0" {
		t.Errorf("programs %s, want the probes' own", got)
	}
	var x int64
	if err := coll.Maps[codegen.MapName("x")].Lookup(uint64(0), &x); err != nil || x != 123 {
		t.Errorf("@x = %d (%v), want 123", x, err)
	}
}

// TestLoadMergedByKernelTypeID: probes merged on one tp_btf tracepoint make
// one program of one function, which loads by its target's cached type ID
// as a probe's own does.
func TestLoadMergedByKernelTypeID(t *testing.T) {
	_, cached := cachedKfreeSkbTypes(t)
	_, out := compiletest.Compile(t, `
tracepoint:skb:kfree_skb { @a = count() }
tracepoint:skb:kfree_skb /len > 10/ { @b = count() }
`, check.Options{}, codegen.Options{})
	if len(out.Programs) != 1 || out.Programs[0].Probes() != 2 || out.Programs[0].Prog.Type != ebpf.Tracing {
		t.Fatalf("%d programs, want one tp_btf program of two probes", len(out.Programs))
	}
	maps, err := ebpf.NewCollection(&ebpf.CollectionSpec{Maps: allocOnUpdate(out.Maps)})
	if err != nil {
		t.Fatal(err)
	}
	defer maps.Close()
	p, err := loadByKernelTypeID(out.Programs[0], maps.Maps, cached)
	if err != nil {
		t.Fatalf("load by type ID: %v", err)
	}
	p.Close()
}

// TestFDLimitBeforeLoad: a script that needs more file descriptors than
// the process may open fails before anything loads, with the limit and
// how many it needs.
func TestFDLimitBeforeLoad(t *testing.T) {
	var b strings.Builder
	for i := range 60 {
		// Interval probes of different periods: no two share a program.
		fmt.Fprintf(&b, "interval:ms:%d { @c%d = count() }\n", 1000+i, i)
	}
	_, out := compiletest.Compile(t, b.String(), check.Options{}, codegen.Options{})
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	low := lim
	low.Cur = uint64(openFDs() + 50)
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	_, err := LoadWith(out, false, nil)
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	var fe *fdLimitError
	if !errors.As(err, &fe) {
		t.Fatalf("LoadWith: %v, want the limit named", err)
	}
	msg := err.Error()
	for _, want := range []string{fmt.Sprintf("the limit is %d (RLIMIT_NOFILE, ulimit -n)", low.Cur), "60 programs", "file descriptors"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q lacks %q", msg, want)
		}
	}
	if fe.need.total()+fe.open <= int(low.Cur) {
		t.Errorf("needs %d, under the limit %d", fe.need.total()+fe.open, low.Cur)
	}
}

// TestThousands writes counts as the errors do.
func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 65536: "65,536", 1048576: "1,048,576", -1234: "-1,234"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestParallelLoad: a script of many programs loads them on several
// threads; each runs, and one the verifier refuses is named as
// cilium/ebpf names it, which is how a merged one is found to split.
func TestParallelLoad(t *testing.T) {
	var b strings.Builder
	for i := range parallelMin + 8 {
		fmt.Fprintf(&b, "interval:ms:%d { @c%d = count() }\n", 1000+i, i)
	}
	_, out := compiletest.Compile(t, b.String(), check.Options{}, codegen.Options{})
	cs := &ebpf.CollectionSpec{Maps: allocOnUpdate(out.Maps), Programs: map[string]*ebpf.ProgramSpec{}}
	for _, p := range out.Programs {
		cs.Programs[p.Name] = p.Prog
	}
	coll, err := newCollection(cs)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range out.Programs {
		if _, err := coll.Programs[p.Name].Run(&ebpf.RunOptions{Context: make([]uint64, 1)}); err != nil {
			t.Errorf("run %s: %v", p.Name, err)
		}
	}
	coll.Close()
	bad := cs.Programs["p7_0"].Copy()
	bad.Instructions = append(asm.Instructions{asm.Mov.Reg(asm.R0, asm.R5)}, bad.Instructions...)
	cs.Programs["p7_0"] = bad
	_, err = newCollection(cs)
	var ve *ebpf.VerifierError
	if !errors.As(err, &ve) || !strings.HasPrefix(err.Error(), "program p7_0: ") {
		t.Errorf("newCollection: %v, want p7_0's verifier error", err)
	}
}
