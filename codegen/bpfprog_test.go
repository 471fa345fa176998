package codegen_test

import (
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/internal/bpfprogtest"
	"github.com/skbtrace/skbtrace/internal/testkit/compiletest"
)

// TestBpfProgPrograms checks that a bpfret: probe compiles to an fexit
// program per loaded program it matches, on that program's function, that
// reads the verdict after the one argument (the context, in R1 or its
// copy in R9) and puts prog_id as a constant; then loads each with its
// target, where the kernel allows fentry on BPF programs (the VM suite's
// bpf-tc-verdict case runs them on traffic).
func TestBpfProgPrograms(t *testing.T) {
	var targets []*ebpf.Program
	var progs []check.BPFProg
	for _, name := range []string{"cg_tc_a", "cg_tc_b"} {
		p, err := ebpf.NewProgram(bpfprogtest.TCDropPort(name, 9))
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		info, _ := p.Info()
		id, _ := info.ID()
		targets = append(targets, p)
		progs = append(progs, check.BPFProg{ID: uint32(id), Name: name, Type: "tc", Func: name})
	}
	list := func() ([]check.BPFProg, error) { return progs, nil }
	_, out := compiletest.Compile(t, `bpfret:tc:cg_tc_* { @[retval, prog_id] = count() }`, check.Options{BPFProgs: list}, codegen.Options{})
	if len(out.Programs) != 2 {
		t.Fatalf("%d programs, want 2", len(out.Programs))
	}
	for i, p := range out.Programs {
		ps := p.Prog
		if ps.Type != ebpf.Tracing || ps.AttachType != ebpf.AttachTraceFExit || ps.AttachTo != progs[i].Name || p.BPF == nil || p.BPF.ID != progs[i].ID {
			t.Errorf("program %d: %v %v on %q (target %+v), want fexit on %s (id %d)", i, ps.Type, ps.AttachType, ps.AttachTo, p.BPF, progs[i].Name, progs[i].ID)
		}
		readsRet, hasID := false, false
		for _, ins := range ps.Instructions {
			if ins.OpCode.Class().IsLoad() && (ins.Src == asm.R9 || ins.Src == asm.R1) && ins.Offset == 8 {
				readsRet = true
			}
			if ins.OpCode.ALUOp() == asm.Mov && ins.Constant == int64(progs[i].ID) {
				hasID = true
			}
		}
		if !readsRet || !hasID {
			t.Errorf("program %d: reads the verdict at ctx+8: %v; has prog_id %d: %v", i, readsRet, progs[i].ID, hasID)
		}
		cp := ps.Copy()
		cp.AttachTarget = targets[i]
		coll, err := ebpf.NewCollection(&ebpf.CollectionSpec{Maps: out.Maps, Programs: map[string]*ebpf.ProgramSpec{p.Name: cp}})
		switch {
		case errors.Is(err, os.ErrPermission):
			t.Logf("the kernel refuses fentry on BPF programs here: %v", err)
		case err != nil:
			t.Errorf("load %s on %s: %v", p.Name, progs[i].Name, err)
		default:
			coll.Close()
		}
	}
}

// TestBpfProgCompare checks that prog == "NAME" is known when each
// program is compiled: true in the program for NAME, false in the other's.
func TestBpfProgCompare(t *testing.T) {
	progs := []check.BPFProg{{ID: 1, Name: "cg_tc_a", Type: "tc", Func: "cg_tc_a"}, {ID: 2, Name: "cg_tc_b", Type: "tc", Func: "cg_tc_b"}}
	list := func() ([]check.BPFProg, error) { return progs, nil }
	_, out := compiletest.Compile(t, `bpf:tc:cg_tc_* /prog == "cg_tc_a"/ { @ = count() }`, check.Options{BPFProgs: list}, codegen.Options{})
	for i, want := range []int64{1, 0} {
		insns := out.Programs[i].Prog.Instructions
		got := int64(-1)
		for j := 0; j+1 < len(insns); j++ {
			mov, jeq := insns[j], insns[j+1]
			if mov.OpCode.ALUOp() == asm.Mov && mov.Dst == asm.R0 && mov.OpCode.Source() == asm.ImmSource &&
				jeq.OpCode.JumpOp() == asm.JEq && jeq.Dst == asm.R0 && jeq.Constant == 0 {
				got = mov.Constant
				break
			}
		}
		if got != want {
			t.Errorf("program for %s: prog == \"cg_tc_a\" is %d, want %d:\n%v", progs[i].Name, got, want, insns)
		}
	}
}

// TestBpfXdpFrame checks that pcap() and pkt in a bpfret:xdp probe compile
// to reads of the frame, xdp_buff's data and data_end (one bpf_probe_read
// each at their offsets, before any other), not of an skb; then loads the
// program on a real XDP program where the kernel allows fentry on BPF
// programs (the VM suite's bpf-hops-xdp case runs it on traffic).
func TestBpfXdpFrame(t *testing.T) {
	target, err := ebpf.NewProgram(bpfprogtest.XDPDropPort("cg_xdp", 9))
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	info, _ := target.Info()
	id, _ := info.ID()
	progs := []check.BPFProg{{ID: uint32(id), Name: "cg_xdp", Type: "xdp", Func: "cg_xdp"}}
	list := func() ([]check.BPFProg, error) { return progs, nil }
	_, out := compiletest.Compile(t, `bpfret:xdp:cg_xdp /pcap("udp dst port 9")/ { print(retval, pkt) }`, check.Options{BPFProgs: list}, codegen.Options{})
	if len(out.Programs) != 1 {
		t.Fatalf("%d programs, want 1", len(out.Programs))
	}
	ps := out.Programs[0].Prog
	// The offsets added to the context before the first two reads.
	var offs []int64
	for i, ins := range ps.Instructions {
		if ins.IsBuiltinCall() && ins.Constant == int64(asm.FnProbeReadKernel) && len(offs) < 2 {
			for j := i - 1; j >= 0; j-- {
				if p := ps.Instructions[j]; p.Dst == asm.R3 && p.OpCode.ALUOp() == asm.Add && p.OpCode.Source() == asm.ImmSource {
					offs = append(offs, p.Constant)
					break
				}
			}
		}
	}
	// struct xdp_buff begins with data, data_end.
	if len(offs) != 2 || offs[0] != 0 || offs[1] != 8 {
		t.Errorf("the first reads are at the context's offsets %v, want [0 8] (data, data_end):\n%v", offs, ps.Instructions)
	}
	cp := ps.Copy()
	cp.AttachTarget = target
	coll, err := ebpf.NewCollection(&ebpf.CollectionSpec{Maps: out.Maps, Programs: map[string]*ebpf.ProgramSpec{"p": cp}})
	switch {
	case errors.Is(err, os.ErrPermission):
		t.Logf("the kernel refuses fentry on BPF programs here: %v", err)
	case err != nil:
		t.Errorf("load: %v", err)
	default:
		coll.Close()
	}
}

// TestBpfProgLate checks CompileLate: a script whose bpf: probes match no
// program yet compiles to none for them and waits; a tc program loaded
// later gets one fexit program per spec that takes it, on its function,
// whose events' ids follow the script's and whose prog name joins the
// probe names; an XDP program gets none; each loads on its target where
// the kernel allows fentry on BPF programs.
func TestBpfProgLate(t *testing.T) {
	list := func() ([]check.BPFProg, error) { return nil, nil }
	_, out := compiletest.Compile(t, `config = { missing_probes = "ignore" }
tracepoint:skb:kfree_skb { print(len) }
bpfret:tc:cg_late* { print(retval, prog, len) }
bpf:tc:cg_late* { @hits[prog] = count() }`, check.Options{BPFProgs: list}, codegen.Options{})
	if !out.WaitsForBPF() || len(out.Programs) != 1 {
		t.Fatalf("waits %v, %d programs, want waiting and the tracepoint's only", out.WaitsForBPF(), len(out.Programs))
	}
	target, err := ebpf.NewProgram(bpfprogtest.TCDropPort("cg_late_a", 9))
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	info, _ := target.Info()
	id, _ := info.ID()
	events := len(out.Events)
	late, err := out.CompileLate(uint32(id), "cg_late_a", "tc", "cg_late_a")
	if err != nil {
		t.Fatal(err)
	}
	if len(late.Programs) != 2 {
		t.Fatalf("%d programs for the tc program, want 2", len(late.Programs))
	}
	for i, want := range []ebpf.AttachType{ebpf.AttachTraceFExit, ebpf.AttachTraceFEntry} {
		p := late.Programs[i]
		if p.Prog.AttachType != want || p.Prog.AttachTo != "cg_late_a" || p.BPF == nil || p.BPF.ID != uint32(id) {
			t.Errorf("program %d: %v on %q, want %v on cg_late_a", i, p.Prog.AttachType, p.Prog.AttachTo, want)
		}
	}
	if len(late.Events) != 1 || late.Events[0].ID != events || late.Events[0].Probe != "cg_late_a" || !late.Events[0].Return {
		t.Errorf("events %+v, want one return event of cg_late_a with id %d", late.Events, events)
	}
	if len(out.Events) != events {
		t.Errorf("the script's events grew from %d to %d", events, len(out.Events))
	}
	if !slices.Contains(late.ProbeNames, "cg_late_a") {
		t.Errorf("probe names %q lack the program's", late.ProbeNames)
	}
	x, err := out.CompileLate(99999, "cg_late_x", "xdp", "cg_late_x")
	if err != nil || len(x.Programs) != 0 {
		t.Errorf("an XDP program: %d programs, %v; want none", len(x.Programs), err)
	}
	for _, p := range late.Programs {
		cp := p.Prog.Copy()
		cp.AttachTarget = target
		coll, err := ebpf.NewCollection(&ebpf.CollectionSpec{Maps: out.Maps, Programs: map[string]*ebpf.ProgramSpec{"p": cp}})
		switch {
		case errors.Is(err, os.ErrPermission):
			t.Logf("the kernel refuses fentry on BPF programs here: %v", err)
		case err != nil:
			t.Errorf("load %s: %v", p.Name, err)
		default:
			coll.Close()
		}
	}
}
