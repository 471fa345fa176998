package codegen_test

import (
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/internal/testkit/compiletest"
	"github.com/skbtrace/skbtrace/lang"
)

// fakeKsym gives every function an address of its own, as kallsyms would.
func fakeKsym() (func(string) uint64, map[uint64]string) {
	names := map[uint64]string{}
	addrs := map[string]uint64{}
	return func(name string) uint64 {
		if a, ok := addrs[name]; ok {
			return a
		}
		a := 0xffffffff81000000 + uint64(len(addrs)+1)*0x1000
		addrs[name], names[a] = a, name
		return a
	}, names
}

// lacksFuncIP is a kernel before 5.15's answer: no bpf_get_func_ip.
func lacksFuncIP() bool { return false }

// callsFuncIP reports whether a program calls bpf_get_func_ip.
func callsFuncIP(p *ebpf.ProgramSpec) bool {
	for _, ins := range p.Instructions {
		if ins.IsBuiltinCall() && asm.BuiltinFunc(ins.Constant) == asm.FnGetFuncIp {
			return true
		}
	}
	return false
}

// constants lists the 64-bit immediates a program loads.
func constants(p *ebpf.ProgramSpec) map[uint64]bool {
	m := map[uint64]bool{}
	for _, ins := range p.Instructions {
		if ins.OpCode.IsDWordLoad() && ins.Reference() == "" {
			m[uint64(ins.Constant)] = true
		}
	}
	return m
}

// TestNoFuncIPHelper compiles for a kernel without bpf_get_func_ip (5.10):
// no program calls it; a program for one function (kprobe:FN, fentry, a
// kretprobe glob's program per function) loads the function's address as
// a constant; the kprobe form reads the instruction pointer; skbret:'s
// kprobe form keys its entries by the task and takes the function from the
// entry's frame. The kprobe programs go through this kernel's verifier.
func TestNoFuncIPHelper(t *testing.T) {
	ksym, names := fakeKsym()
	opts := codegen.Options{
		HaveFuncIP:   lacksFuncIP,
		Arch:         "amd64",
		Ksym:         ksym,
		SkbTargets:   map[string][]codegen.SkbTarget{"ip_rcv*": {{SkbArg: 0}}, "ip_local_deliver": {{Name: "ip_local_deliver", Fentry: true, SkbArg: 0}}},
		RetTargets:   map[string][]codegen.SkbTarget{"ip_rcv_core": {{SkbArg: -1, Return: true, Ret: codegen.RetClass{Size: 8, Ptr: true}}}},
		EntryTargets: []codegen.SkbTarget{{SkbArg: 0}},
	}
	out := compileWith(t, `skb:ip_rcv* { print(len); @s[func] = count() }
skb:ip_local_deliver { @f[func] = count() }
skbret:ip_rcv_core { print(retval, duration); @r[func] = count() }
kretprobe:ip_rcv* { @k[func, retval] = count() }
kprobe:ip_rcv { @one[func] = count() }`, opts)
	kret := map[string]bool{}
	for _, p := range out.Programs {
		if callsFuncIP(p.Prog) {
			t.Errorf("%s calls bpf_get_func_ip", p.Name)
		}
		consts := constants(p.Prog)
		var fn string
		for a := range consts {
			if names[a] != "" {
				fn = names[a]
			}
		}
		switch {
		case p.Spec != nil && p.Spec.Spec.Text == "kretprobe:ip_rcv*":
			if len(p.Functions) != 1 || fn != p.Functions[0] {
				t.Errorf("%s: kretprobe glob program for %v loads the address of %q, want a program per function with its own", p.Name, p.Functions, fn)
			}
			if len(p.Functions) == 1 {
				kret[p.Functions[0]] = true
			}
		case p.Spec != nil && p.Spec.Spec.Text == "kprobe:ip_rcv", p.Function == "ip_local_deliver":
			want := "ip_rcv"
			if p.Function != "" {
				want = p.Function
			}
			if fn != want {
				t.Errorf("%s loads the address of %q, want %q's", p.Name, fn, want)
			}
		case p.KprobeForm():
			if fn != "" {
				t.Errorf("%s: a program shared by many functions loads the address of %q", p.Name, fn)
			}
		}
	}
	if len(kret) < 2 {
		t.Errorf("kretprobe:ip_rcv* compiled to programs for %v, want one per function (ip_rcv, ip_rcv_core, ...)", kret)
	}
	if m := out.Maps[codegen.EntryMap]; m == nil || m.ValueSize != 8+24*8 {
		t.Errorf("entry map %+v: want frames of the skb, the time and the function", m)
	}
	// The kprobe programs load; the fentry one this kernel may refuse.
	kprobes := &codegen.Output{Maps: out.Maps}
	for _, p := range out.Programs {
		if p.Prog.Type == ebpf.Kprobe {
			kprobes.Programs = append(kprobes.Programs, p)
		}
	}
	load(t, kprobes)
}

// TestKprobeArgsArm64 reads arguments, the return value and the
// instruction pointer through arm64's struct pt_regs (x0-x7 at 0-56, sp at
// 248, pc at 256), not x86-64's.
func TestKprobeArgsArm64(t *testing.T) {
	opts := codegen.Options{HaveFuncIP: lacksFuncIP, Arch: "arm64", SkbTargets: map[string][]codegen.SkbTarget{"ip_rcv*": {{SkbArg: 1}}}}
	out := compileWith(t, `skb:ip_rcv* { @[func, len] = count() } kretprobe:ip_rcv_core { @r = count(); print(retval) }`, opts)
	offsets := map[string]map[int16]bool{}
	for _, p := range out.Programs {
		// The context is R1 until the first call, and R9 throughout
		// where the program keeps it.
		offsets[p.Name] = map[int16]bool{}
		called := false
		for _, ins := range p.Prog.Instructions {
			called = called || ins.IsFunctionCall() || ins.IsBuiltinCall()
			if ins.OpCode.Class().IsLoad() && ins.OpCode.Mode() == asm.MemMode && (ins.Src == asm.R9 || ins.Src == asm.R1 && !called) {
				offsets[p.Name][ins.Offset] = true
			}
		}
	}
	for name, offs := range offsets {
		for off := range offs {
			switch off {
			case 0, 8, 256:
			default:
				t.Errorf("%s reads pt_regs at %d: not x1 (8), x0 (0) or pc (256)", name, off)
			}
		}
	}
	for _, p := range out.Programs {
		if p.KprobeForm() && (!offsets[p.Name][8] || !offsets[p.Name][256]) {
			t.Errorf("%s: the skb from x1 (8) and func from pc (256): reads %v", p.Name, offsets[p.Name])
		}
		if p.Spec != nil && p.Spec.Spec.Kind == lang.ProbeKretprobe && !offsets[p.Name][0] {
			t.Errorf("%s: retval from x0 (0): reads %v", p.Name, offsets[p.Name])
		}
	}
}

// TestKprobeArchUnknown says which architectures kprobes know, whether
// the program reads an argument or only, on a kernel without
// bpf_get_func_ip, the instruction pointer for func: never a silent 0.
func TestKprobeArchUnknown(t *testing.T) {
	for _, text := range []string{`kprobe:ip_rcv { print(arg0) }`, `skb:ip_rcv { @[func] = count() }`} {
		script, info := compiletest.Check(t, text, check.Options{})
		opts := codegen.Options{Arch: "riscv64", HaveFuncIP: lacksFuncIP, SkbTargets: map[string][]codegen.SkbTarget{"ip_rcv": {{SkbArg: 0}}}}
		if _, err := codegen.Compile(script, info, opts); err == nil || !strings.Contains(err.Error(), "riscv64") {
			t.Errorf("%s on riscv64: %v, want an error naming it", text, err)
		}
	}
}
