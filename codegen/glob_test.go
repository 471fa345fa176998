package codegen_test

import (
	"slices"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/internal/testkit"
)

// TestKprobeGlobGroups: a kprobe glob compiles to one program per place of
// the skb among its functions' arguments, each listing the functions it is
// for; together they cover every function exactly once, and each reads the
// skb from its own argument register.
func TestKprobeGlobGroups(t *testing.T) {
	out := compile(t, `kprobe:ip_rcv* { @[len] = count() }`)
	var all []string
	skbRegs := map[int16]bool{}
	for _, p := range out.Programs {
		if len(p.Functions) == 0 || p.Prog.Type != ebpf.Kprobe || p.Prog.AttachTo != "" {
			t.Fatalf("%s: not a kprobe glob program: %+v", p.Name, p)
		}
		all = append(all, p.Functions...)
		// The first load from the context (R9, or R1 where it is read
		// before R1 changes) is the skb's register.
		for _, ins := range p.Prog.Instructions {
			if ins.OpCode.Class() == asm.LdXClass && (ins.Src == asm.R9 || ins.Src == asm.R1) {
				skbRegs[ins.Offset] = true
				break
			}
		}
	}
	slices.Sort(all)
	for _, want := range []string{"ip_rcv", "ip_rcv_core", "ip_rcv_finish"} {
		if _, ok := slices.BinarySearch(all, want); !ok {
			t.Errorf("%s is in no program: %v", want, all)
		}
	}
	if len(slices.Compact(slices.Clone(all))) != len(all) {
		t.Errorf("a function is in two programs: %v", all)
	}
	// ip_rcv(skb, ...) and ip_rcv_finish(net, sk, skb): two places.
	if len(out.Programs) < 2 || len(skbRegs) != len(out.Programs) {
		t.Errorf("%d programs reading the skb from %d registers; want one each, at least two", len(out.Programs), len(skbRegs))
	}
}

// TestFexitGlobRetvalPerFunction: an fexit glob compiles to a program per
// function, each attached to its function, reading the return value after
// that function's own arguments, narrowed to its own type where the
// functions' return types differ.
func TestFexitGlobRetvalPerFunction(t *testing.T) {
	out := compile(t, `fexit:ip_rcv* { @[retval] = count() }`)
	spec := testkit.KernelBTF(t)
	seen := map[string]bool{}
	for _, p := range out.Programs {
		if p.Function == "" || p.Prog.AttachTo != p.Function || p.Prog.AttachType != ebpf.AttachTraceFExit {
			t.Fatalf("%s: not an fexit program of one function: %+v", p.Name, p.Prog)
		}
		seen[p.Function] = true
		var fn *btf.Func
		if err := spec.TypeByName(p.Function, &fn); err != nil {
			t.Fatal(err)
		}
		proto := fn.Type.(*btf.FuncProto)
		_, void := proto.Return.(*btf.Void)
		retOff := int16(8 * len(proto.Params))
		reads, zero := false, false
		for _, ins := range p.Prog.Instructions {
			if ins.OpCode.Class() == asm.LdXClass && (ins.Src == asm.R9 || ins.Src == asm.R1) && ins.Offset == retOff { // the context: R9, or R1 where it is read first
				reads = true
			}
			if ins.OpCode == asm.Mov.Op(asm.ImmSource) && ins.Dst == asm.R0 && ins.Constant == 0 {
				zero = true
			}
		}
		if !reads {
			t.Errorf("%s: does not read the return value at %d:\n%v", p.Function, retOff, p.Prog.Instructions)
		}
		if void && !zero {
			t.Errorf("%s returns void, and its retval is not 0", p.Function)
		}
	}
	for _, want := range []string{"ip_rcv", "ip_rcv_core", "ip_rcv_finish"} {
		if !seen[want] {
			t.Errorf("no program for %s", want)
		}
	}
}
