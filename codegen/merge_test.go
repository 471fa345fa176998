package codegen_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/lang"
)

// implicitExit is the probe a script of begin probes only ends with:
// bpftrace exits once they ran (passes.ExitAfterBegin adds begin { exit() }).
const implicitExit = 1

// scriptPrograms are the programs of a script's probes, helpers left out.
func scriptPrograms(out *codegen.Output) []*codegen.Program {
	var ps []*codegen.Program
	for _, p := range out.Programs {
		if p.Helper == "" {
			ps = append(ps, p)
		}
	}
	return ps
}

// runAll runs every BEGIN program of a loaded script once, in order, as
// the runtime does.
func runAll(t *testing.T, out *codegen.Output, coll *ebpf.Collection) {
	t.Helper()
	for _, p := range out.Programs {
		if p.Spec.Spec.Kind != lang.ProbeBegin {
			continue
		}
		if _, err := coll.Programs[p.Name].Run(&ebpf.RunOptions{Context: make([]uint64, 1)}); err != nil {
			t.Fatalf("run %s: %v", p.Name, err)
		}
	}
}

// TestMergedBeginRunsInOrder: BEGIN probes share one program, which runs
// each probe's code in script order (each multiplies what the one before
// left by ten and adds its own digit), with its own predicate, variables
// and loop callbacks (bpf_loop: functions described to the kernel), and
// return ending only its own probe.
func TestMergedBeginRunsInOrder(t *testing.T) {
	script := `
BEGIN { @x = 1 }
BEGIN /@x == 1/ { $n = 4; $s = 0; for ($i : 0..$n) { $s += $i } @x = @x * 10 + $s - 4 }
BEGIN /@x == 0/ { @x = 999 }
BEGIN { @x = @x * 10 + 3; return; @x = 0 }
BEGIN { $a = "abc"; @m[1] = 2; $k = 0; for ($kv : @m) { $k = $kv.1 } @x = @x * 10 + $k + 2 }
BEGIN { @x = @x * 10 + 5; @c = count() }
`
	out := compile(t, script)
	ps := scriptPrograms(out)
	// Six probes and the begin { exit() } a script of begin probes only
	// ends with (passes.ExitAfterBegin).
	if len(ps) != 1 || len(ps[0].Merged) != 6+implicitExit || ps[0].Probes() != 6+implicitExit {
		t.Fatalf("%d programs, want one of 7 probes", len(ps))
	}
	for i, m := range ps[0].Merged {
		if want := fmt.Sprintf("p%d_0", i); m.Name != want || m.Prog != nil {
			t.Errorf("probe %d: program %s (code kept: %v), want %s, its code in the merged program", i, m.Name, m.Prog != nil, want)
		}
	}
	coll := load(t, out)
	runAll(t, out, coll)
	if got := keyless(t, coll, "x"); got != 12345 {
		t.Errorf("@x = %d, want 12345: the probes' code in script order", got)
	}
}

// TestUnmergedProgramsLoad: a merged program's probes' own programs, as
// Unmerge rebuilds them for a kernel that refuses the merged one, load and
// run alike, one after the other.
func TestUnmergedProgramsLoad(t *testing.T) {
	out := compile(t, `
BEGIN { @x = 1 }
BEGIN { $n = 4; $s = 0; for ($i : 0..$n) { $s += $i } @x = @x * 10 + $s - 4 }
BEGIN { @x = @x * 10 + 3; return; @x = 0 }
BEGIN { @x = @x * 10 + 4 }
`)
	ps := scriptPrograms(out)
	if len(ps) != 1 || len(ps[0].Merged) != 4+implicitExit {
		t.Fatalf("%d programs, want one of 5 probes", len(ps))
	}
	own := ps[0].Unmerge()
	out.Programs = own
	coll := load(t, out)
	runAll(t, out, coll)
	if got := keyless(t, coll, "x"); got != 1234 {
		t.Errorf("@x = %d, want 1234", got)
	}
	for i, p := range own {
		if p.Name != fmt.Sprintf("p%d_0", i) || p.Prog.Name != p.Name || len(p.Merged) != 0 {
			t.Errorf("program %d: %s (spec %s), want p%d_0", i, p.Name, p.Prog.Name, i)
		}
	}
}

// TestMergedTracepoint attaches four probes on one tracepoint as the one
// program they compile to, makes the event happen, and finds each probe's
// count: each ran once an event, with its own predicate. With the stop
// gate set, none runs.
func TestMergedTracepoint(t *testing.T) {
	pred := fmt.Sprintf("pid == %d && args.id == %d", os.Getpid(), unix.SYS_GETPRIORITY)
	out := compile(t, fmt.Sprintf(`
tracepoint:raw_syscalls:sys_enter /%s/ { @a = count() }
tracepoint:raw_syscalls:sys_enter /%s/ { @b = count(); @b = count() }
tracepoint:raw_syscalls:sys_enter /%s && args.id == 0/ { @c = count() }
tracepoint:raw_syscalls:sys_enter /%s/ { @d = count(); @d = count(); @d = count() }
`, pred, pred, pred, pred))
	ps := scriptPrograms(out)
	if len(ps) != 1 || ps[0].Probes() != 4 {
		t.Fatalf("%d programs, want one of 4 probes", len(ps))
	}
	coll := load(t, out)
	l, err := link.AttachTracing(link.TracingOptions{Program: coll.Programs[ps[0].Name], AttachType: ebpf.AttachTraceRawTp})
	if err != nil {
		t.Fatalf("attach: %v", err)
	}
	defer l.Close()
	const n = 5
	for range n {
		unix.Getpriority(unix.PRIO_PROCESS, 0)
	}
	for name, want := range map[string]uint64{"a": n, "b": 2 * n, "c": 0, "d": 3 * n} {
		if got := perCPUCount(t, coll, name); got != want {
			t.Errorf("@%s = %d, want %d", name, got, want)
		}
	}
	if err := coll.Maps[codegen.StopMap].Put(uint32(0), uint32(1)); err != nil {
		t.Fatal(err)
	}
	unix.Getpriority(unix.PRIO_PROCESS, 0)
	if got := perCPUCount(t, coll, "a"); got != n {
		t.Errorf("@a = %d after the stop gate was set, want %d", got, n)
	}
}

// perCPUCount sums a keyless count() of the script over the CPUs, 0 where
// it was never written.
func perCPUCount(t *testing.T, coll *ebpf.Collection, name string) uint64 {
	t.Helper()
	var vals []uint64
	if err := coll.Maps[codegen.MapName(name)].Lookup(uint64(0), &vals); err != nil {
		return 0
	}
	var sum uint64
	for _, v := range vals {
		sum += v
	}
	return sum
}

// TestMergeSplitsAtLimits: a group of probes is split where one program
// would use more than 64 maps; both programs load and run.
func TestMergeSplitsAtLimits(t *testing.T) {
	var b strings.Builder
	for i := range 70 {
		fmt.Fprintf(&b, "BEGIN { @m%d[%d] = %d }\n", i, i, i)
	}
	out := compile(t, b.String())
	ps := scriptPrograms(out)
	if len(ps) != 2 || ps[0].Probes()+ps[1].Probes() != 70+implicitExit {
		t.Fatalf("%d programs, want two of 71 probes", len(ps))
	}
	coll := load(t, out)
	runAll(t, out, coll)
	var v int64
	if err := coll.Maps[codegen.MapName("m69")].Lookup(int64(69), &v); err != nil || v != 69 {
		t.Errorf("@m69[69] = %d (%v), want 69: the last probe, in the second program", v, err)
	}
}

// TestMergeSizeBound: many probes on one point make several programs of at
// most a bounded size, in script order, each within what the kernel takes.
func TestMergeSizeBound(t *testing.T) {
	var b strings.Builder
	const n = 400
	b.WriteString("BEGIN { @x = 0 }\n")
	for i := range n {
		fmt.Fprintf(&b, "BEGIN /@x == %d/ { @x = %d }\n", i, i+1)
	}
	out := compile(t, b.String())
	ps := scriptPrograms(out)
	probes := 0
	for _, p := range ps {
		probes += p.Probes()
		if len(p.Prog.Instructions) > 2048 {
			t.Errorf("%s: %d instructions", p.Name, len(p.Prog.Instructions))
		}
	}
	if len(ps) < 2 || probes != n+1+implicitExit {
		t.Fatalf("%d programs of %d probes, want several of %d", len(ps), probes, n+1+implicitExit)
	}
	coll := load(t, out)
	runAll(t, out, coll)
	if got := keyless(t, coll, "x"); got != n {
		t.Errorf("@x = %d, want %d: each probe's predicate saw the one before's value", got, n)
	}
}
