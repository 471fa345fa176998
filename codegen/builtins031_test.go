package codegen_test

import (
	"slices"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/internal/testkit/compiletest"
)

// TestTestProbesReturnExitCodes runs test: programs in the kernel as
// --test does: exit(N) is the program's return value, a test that runs to
// its end (or whose predicate is false) returns 0.
func TestTestProbesReturnExitCodes(t *testing.T) {
	out := compile(t, `test:ends { $x = 1; }
test:exits { $x = 2; if ($x == 2) { exit(3); } exit(4); }
test:computed { $c = 5; exit($c + 1); }
test:skipped /1 == 2/ { exit(1); }
test:asserts { assert(1 == 2, "no"); }
bench:loops { $i = 0; @n = count(); }`)
	coll := load(t, out)
	want := map[string]uint32{"ends": 0, "exits": 3, "computed": 6, "skipped": 0, "asserts": 1}
	seen := 0
	for _, p := range out.Programs {
		if p.Prog.Type != ebpf.XDP {
			t.Errorf("%s: a %s program, want XDP", p.Name, p.Prog.Type)
		}
		switch p.Attach.Kind {
		case codegen.AttachTest:
			code, _, err := coll.Programs[p.Name].Benchmark(make([]byte, 14), 1, nil)
			if err != nil {
				t.Fatalf("test:%s: %v", p.Attach.Name, err)
			}
			if code != want[p.Attach.Name] {
				t.Errorf("test:%s returned %d, want %d", p.Attach.Name, code, want[p.Attach.Name])
			}
			seen++
		case codegen.AttachBench:
			if p.Attach.Name != "loops" {
				t.Errorf("bench named %q", p.Attach.Name)
			}
			if _, d, err := coll.Programs[p.Name].Benchmark(make([]byte, 14), 100, nil); err != nil || d <= 0 {
				t.Errorf("bench:loops: %v %v", d, err)
			}
		default:
			t.Errorf("%s: attach kind %v", p.Name, p.Attach.Kind)
		}
	}
	if seen != len(want) {
		t.Errorf("%d test programs, want %d (one each)", seen, len(want))
	}
}

// TestRegAndCommPidLoad puts reg() in kprobe and kretprobe programs, and
// comm(pid) in a tracepoint program (tp_btf or classic: this kernel lets
// both call bpf_task_from_pid),
// through the kernel's verifier.
func TestRegAndCommPidLoad(t *testing.T) {
	load(t, compile(t, `kprobe:ip_rcv { @ip = reg("ip"); @x[reg("sp")] = count(); } kretprobe:ip_rcv { @ax = reg("ax"); }`))
	allowed := func(progType, kfunc string) bool {
		return (progType == "tracing" || progType == "tracepoint") && kfunc == "bpf_task_from_pid"
	}
	_, out := compiletest.Compile(t, `tracepoint:sched:sched_switch { @[comm(args.next_pid), comm(1)] = count(); }`, check.Options{KfuncAllowed: allowed}, codegen.Options{})
	load(t, out)
}

// TestKprobeOffsetProbeName checks the probe builtin of kprobe:FN+OFFSET:
// the offset in decimal after the function, as bpftrace names the probe,
// and the function's own kprobe named without one.
func TestKprobeOffsetProbeName(t *testing.T) {
	out := compile(t, `kprobe:ip_rcv+0x10 { @a[probe] = count(); } kprobe:ip_rcv { @b[probe] = count(); }`)
	if !slices.Contains(out.ProbeNames, "kprobe:ip_rcv+16") || !slices.Contains(out.ProbeNames, "kprobe:ip_rcv") {
		t.Errorf("probe names %q", out.ProbeNames)
	}
}
