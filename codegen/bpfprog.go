package codegen

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/lang"
)

// compileBPFProgs compiles a bpf: or bpfret: spec to one tracing program
// per loaded program it matches: fentry (bpf:) or fexit (bpfret:) on the
// program's function, its context argument 0, the verdict after it.
func compileBPFProgs(s *lang.Script, info *check.Info, ms *mapSet, out *Output, p *lang.Probe, spec *check.SpecInfo, name string, ksym func(string) uint64) ([]*Program, error) {
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
