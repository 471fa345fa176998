package codegen_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/internal/testkit/compiletest"
	"github.com/skbtrace/skbtrace/lang"
)

// usesScratch reports whether any program of out reads the scratch map.
func usesScratch(out *codegen.Output) bool {
	for _, p := range out.Programs {
		if p.Prog == nil {
			continue
		}
		for _, ins := range p.Prog.Instructions {
			if ins.IsLoadFromMap() && ins.Reference() == codegen.ScratchMap {
				return true
			}
		}
	}
	return false
}

// TestScratchRuns runs, in the kernel, probes whose strings do not fit
// the 512-byte stack, and checks what they computed: a 900-byte string in
// a variable, copied, compared, measured, as a map key, and read back in
// a loop body that shares the probe's variables; and a tuple that
// on_stack_limit puts in the scratch area.
func TestScratchRuns(t *testing.T) {
	long := strings.Repeat("x", 899) + "y"
	cases := []struct {
		name, text string
		want       map[string]int64
	}{
		{"long string", `config = { max_strlen = 1024 } BEGIN { $s = "` + long + `"; $t = $s; @n = strlen($t); if ($t == $s) { @eq = 1 } @k[$s] = 5; for ($kv : @k) { if ($kv.0 == $s) { @loop = strlen($kv.0) + $kv.1 } @seen = strlen($s) } }`,
			map[string]int64{"n": 900, "eq": 1, "loop": 905, "seen": 900}},
		{"strings past the stack", `BEGIN { $a = str(comm, 200); $b = str(comm, 200); $c = str(comm, 200); @n = strlen($a) + strlen($b) + strlen($c); @d = strstr("` + long + `", "y") }`,
			nil},
		{"on_stack_limit", `config = { on_stack_limit = 8 } BEGIN { $a = (1, 2, 3); @x = $a.1 + $a.2 }`, map[string]int64{"x": 5}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := compile(t, c.text)
			if !usesScratch(out) {
				t.Fatalf("no program reads %s", codegen.ScratchMap)
			}
			coll := runBegin(t, c.text)
			for name, want := range c.want {
				if got := keyless(t, coll, name); got != want {
					t.Errorf("@%s = %d, want %d", name, got, want)
				}
			}
			if c.want == nil {
				// comm is the test's own: three copies of it, and y at 899.
				if got := keyless(t, coll, "d"); got != 899 {
					t.Errorf("@d = %d, want 899", got)
				}
				if got := keyless(t, coll, "n"); got <= 0 || got%3 != 0 {
					t.Errorf("@n = %d, want three times comm's length", got)
				}
			}
		})
	}
}

// TestScratchLoads puts probes with long strings through the verifier:
// str() of max_strlen 4096 in printf, print, map keys and values, a
// string loop over a map, and skb: and tracepoint programs.
func TestScratchLoads(t *testing.T) {
	for _, s := range []string{
		`config = { max_strlen = 4096 } tracepoint:sched:sched_process_exec { printf("%s %s\n", comm, str(args.bprm->filename)); @[str(args.bprm->filename)] = count() }`,
		`config = { max_strlen = 1024 } tracepoint:sched:sched_process_exec { @f[tid] = str(args.bprm->filename) } tracepoint:sched:sched_process_exit { print(@f[tid]); $p = @f[tid]; for ($kv : @f) { if ($kv.1 == $p) { printf("%d %s\n", $kv.0, $kv.1) } } delete(@f, tid) }`,
		`config = { max_strlen = 2048 } tracepoint:skb:kfree_skb { printf("%s %s %d\n", str(skb->dev->name), str(skb->data, 2000), len) }`,
		`config = { max_strlen = 600 } skb:* { print(len, dev, str(skb->dev->name)) }`,
	} {
		load(t, compile(t, s))
	}
}

// TestScratchOnlyWhereNeeded checks that a probe whose slots fit the
// stack is compiled as before (no scratch map, no R8 base), beside one
// that does not.
func TestScratchOnlyWhereNeeded(t *testing.T) {
	text := `config = { max_strlen = 1024 } tracepoint:skb:kfree_skb { @[dev, len] = count() } tracepoint:sched:sched_process_exec { printf("%s\n", str(args.bprm->filename)) }`
	out := compile(t, text)
	load(t, out)
	for _, p := range out.Programs {
		if p.Prog == nil {
			continue
		}
		long := strings.Contains(p.Prog.AttachTo, "exec")
		reads, viaR8 := false, false
		for _, ins := range p.Prog.Instructions {
			reads = reads || ins.IsLoadFromMap() && ins.Reference() == codegen.ScratchMap
			cls := ins.OpCode.Class()
			viaR8 = viaR8 || (cls == asm.LdXClass && ins.Src == asm.R8) || ((cls == asm.StXClass || cls == asm.StClass) && ins.Dst == asm.R8)
		}
		if reads != long || viaR8 != long {
			t.Errorf("%s (%s): reads the scratch map %v, through R8 %v; want %v", p.Name, p.Prog.AttachTo, reads, viaR8, long)
		}
	}
	if m := out.Maps[codegen.ScratchMap]; m == nil || m.ValueSize < 1025 {
		t.Fatalf("scratch map %+v, want one holding a 1025-byte string", m)
	}
}

// TestScratchFull checks that a probe whose strings do not fit the
// scratch area either is a positioned error, not a panic.
func TestScratchFull(t *testing.T) {
	var b strings.Builder
	b.WriteString(`config = { max_strlen = 4096 } tracepoint:sched:sched_process_exec { `)
	for i := range 9 {
		fmt.Fprintf(&b, "$s%d = str(args.bprm->filename); ", i)
	}
	b.WriteString(`printf("%s\n", $s0) }`)
	script, info := compiletest.Check(t, b.String(), check.Options{})
	_, err := codegen.Compile(script, info, codegen.Options{})
	var d *lang.Diagnostics
	if !errors.As(err, &d) || !strings.Contains(err.Error(), "test.st:1:") || !strings.Contains(err.Error(), "bytes of scratch memory") {
		t.Fatalf("got %v, want a positioned error about scratch memory", err)
	}
}
