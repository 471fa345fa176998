package codegen

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/lang"
)

// compileBPFProgs compiles a bpf: or bpfret: spec to one tracing program
// per loaded program it matches: fentry (bpf:) or fexit (bpfret:) on the
// program's function, its context argument 0, the verdict after it.
func compileBPFProgs(s *lang.Script, info *check.Info, ms *mapSet, out *Output, p *lang.Probe, spec *check.SpecInfo, name string, ksym func(string) uint64) ([]*Program, error) {
	if psi := check.LatePlaceholder(spec); psi != nil {
		// Programs loaded while tracing use the script's maps: the ones
		// the spec's program needs are made now. The program, its events
		// and names are not kept.
		events, names := len(out.Events), len(out.ProbeNames)
		_, err := compileProbe(info, ms, out, p, psi, name+"_wait", SkbTarget{SkbArg: -1, bpf: psi.Prog}, ksym)
		if err != nil {
			return nil, positioned(s, spec, err)
		}
		out.Events, out.ProbeNames = out.Events[:events], out.ProbeNames[:names]
	}
	var progs []*Program
	for i, psi := range spec.Progs {
		prog, err := compileProbe(info, ms, out, p, psi, fmt.Sprintf("%s_bpf%d", name, i), SkbTarget{SkbArg: -1, bpf: psi.Prog}, ksym)
		if err != nil {
			return nil, positioned(s, spec, err)
		}
		progs = append(progs, prog)
	}
	return progs, nil
}

func bpfAttachType(k lang.ProbeKind) ebpf.AttachType {
	if k == lang.ProbeBpfRet {
		return ebpf.AttachTraceFExit
	}
	return ebpf.AttachTraceFEntry
}

// bpfProbeName is the probe builtin's value in a bpf: program:
// bpf:TYPE:NAME, or bpfret:TYPE:NAME.
func bpfProbeName(k lang.ProbeKind, p *check.BPFProg) string {
	if p == nil {
		return string(k)
	}
	return string(k) + ":" + p.Type + ":" + p.Name
}

// bpfProgValue pushes prog (the traced program's name, an index into
// Output.ProbeNames as probe's) or prog_id, both known when the program
// is compiled.
func (g *gen) bpfProgValue(what string) error {
	p := g.target.bpf
	if p == nil {
		return fmt.Errorf("%s outside a bpf: program", what)
	}
	if what == "prog" {
		return g.nameValue(p.Name)
	}
	g.emit(asm.Mov.Imm(asm.R0, int32(p.ID)))
	return g.vs.push(asm.R0)
}

// bpfProgCompare reports whether a comparison with a name is prog's, in a
// bpf: program (prog == "cil_from_netdev"): the checker records it as
// probe's, whose value prog shares.
func (g *gen) bpfProgCompare(e *lang.BinaryExpr) bool {
	if g.target.bpf == nil {
		return false
	}
	for _, x := range []lang.Expr{e.X, e.Y} {
		if id, ok := x.(*lang.Ident); ok && id.Name == "prog" {
			return true
		}
	}
	return false
}

// xdpPtr pushes a bpf:xdp program's context, the kernel's struct xdp_buff
// pointer (argument 0), where stdlib.BaseXdp's member chains start.
func (g *gen) xdpPtr() error {
	if err := g.loadArg(asm.R0, 0); err != nil {
		return err
	}
	g.emit(asm.JEq.Imm(asm.R0, 0, exitLabel))
	return g.vs.push(asm.R0)
}

// xdpLen pushes an XDP frame's length: xdp->data_end - xdp->data, both read
// with bpf_probe_read_kernel at their offsets in this kernel's xdp_buff.
func (g *gen) xdpLen() error {
	if g.target.bpf == nil || len(g.spec.Params) == 0 {
		return fmt.Errorf("len outside a bpf:xdp program")
	}
	data, end, err := g.xdpBounds()
	if err != nil {
		return err
	}
	slot, err := g.readScratch()
	if err != nil {
		return err
	}
	tmp, err := g.frame.alloc(8)
	if err != nil {
		return err
	}
	if err := g.xdpPtr(); err != nil {
		return err
	}
	g.vs.pop(asm.R3)
	g.emit(asm.StoreMem(asm.RFP, tmp, asm.R3, asm.DWord))
	g.emit(zero8(slot)...)
	g.emit(asm.Add.Imm(asm.R3, end))
	g.probeRead(slot, 8)
	g.emit(asm.LoadMem(asm.R3, asm.RFP, tmp, asm.DWord), asm.Add.Imm(asm.R3, data))
	g.emit(zero8(tmp)...)
	g.probeRead(tmp, 8)
	g.emit(
		asm.LoadMem(asm.R0, asm.RFP, slot, asm.DWord),
		asm.LoadMem(asm.R1, asm.RFP, tmp, asm.DWord),
		asm.Sub.Reg(asm.R0, asm.R1),
	)
	return g.vs.push(asm.R0)
}

// xdpBounds finds the offsets of data and data_end in this kernel's
// xdp_buff, the context of an XDP program (argument 0).
func (g *gen) xdpBounds() (data, end int32, err error) {
	ptr, _ := btf.UnderlyingType(g.spec.Params[0].BTF).(*btf.Pointer)
	if ptr == nil {
		return 0, 0, fmt.Errorf("the XDP context is not a pointer")
	}
	st, _ := btf.UnderlyingType(ptr.Target).(*btf.Struct)
	data, errD := memberOffset(st, "data")
	end, errE := memberOffset(st, "data_end")
	return data, end, errors.Join(errD, errE)
}

// memberOffset is a top-level member's byte offset in a struct.
func memberOffset(st *btf.Struct, name string) (int32, error) {
	if st == nil {
		return 0, fmt.Errorf("no struct for member %s", name)
	}
	for _, m := range st.Members {
		if m.Name == name {
			return int32(m.Offset.Bytes()), nil
		}
	}
	return 0, fmt.Errorf("struct %s has no member %s", st.Name, name)
}
