package codegen

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/lang"
)

// ctxKind says how a program reads its arguments.
type ctxKind uint8

const (
	// ctxArgs: R1 points to an array of u64 arguments (tp_btf, fentry, fexit).
	ctxArgs ctxKind = iota
	// ctxRegs: R1 points to struct pt_regs (kprobe, kretprobe).
	ctxRegs
)

// Program is one eBPF program: the code of a probe for one of its specs.
type Program struct {
	Probe *lang.Probe
	Spec  *check.SpecInfo
	Name  string
	Prog  *ebpf.ProgramSpec
	// SkbArg is, for skb: probes, the argument position of the skb this
	// program reads; the runtime attaches it to the functions whose skb is
	// there. -1 for other probes.
	SkbArg int
}

// SkbArgs are the argument positions skb: programs are generated for: the
// skb is among the first five arguments of nearly every function taking one.
const SkbArgs = 5

// Output is a compiled script: its programs, the maps they share, and the
// layout of the records its printf and print calls write.
type Output struct {
	Programs []*Program
	Maps     map[string]*ebpf.MapSpec
	Events   []*Event
}

// Compile generates the programs of a checked script.
func Compile(s *lang.Script, info *check.Info) (*Output, error) {
	out := &Output{Maps: map[string]*ebpf.MapSpec{}}
	ms := &mapSet{info: info, specs: out.Maps}
	for pi, p := range s.Probes {
		for si, spec := range info.Probes[p].Specs {
			name := fmt.Sprintf("p%d_%d", pi, si)
			args := []int{-1}
			if spec.Spec.Kind == lang.ProbeSkb {
				args = args[:0]
				for a := 0; a < SkbArgs; a++ {
					args = append(args, a)
				}
			}
			for _, a := range args {
				n := name
				if a >= 0 {
					n = fmt.Sprintf("%s_skb%d", name, a)
				}
				prog, err := compileProbe(info, ms, out, p, spec, n, a)
				var ue *unsupportedError
				if errors.As(err, &ue) {
					// Point at the script, as the checker does.
					d := &lang.Diagnostics{Src: s.Src}
					d.Add(ue.span, "", "%s is not compiled yet", ue.what)
					return nil, d
				}
				if err != nil {
					return nil, fmt.Errorf("%s: %w", spec.Spec.Text, err)
				}
				out.Programs = append(out.Programs, prog)
			}
		}
	}
	return out, nil
}

// gen generates one program.
type gen struct {
	info   *check.Info
	maps   *mapSet
	out    *Output
	probe  *lang.Probe
	spec   *check.SpecInfo
	ctx    ctxKind
	insns  asm.Instructions
	frame  frame
	vs     vstack
	vars   map[string]int16
	labels int
	// scratch is the slot probe reads land in (0 until allocated).
	scratch int16
	// skbArg is the skb's argument position in skb: programs, else -1.
	skbArg int
}

func (g *gen) emit(ins ...asm.Instruction) { g.insns = append(g.insns, ins...) }

// label returns a fresh label name.
func (g *gen) label(what string) string {
	g.labels++
	return fmt.Sprintf("%s_%d", what, g.labels)
}

// mark puts a label on the next instruction, with a no-op jump target.
func (g *gen) mark(label string) {
	g.emit(asm.Mov.Reg(asm.R0, asm.R0).WithSymbol(label))
}

const exitLabel = "exit"

func compileProbe(info *check.Info, ms *mapSet, out *Output, p *lang.Probe, spec *check.SpecInfo, name string, skbArg int) (*Program, error) {
	g := &gen{info: info, maps: ms, out: out, probe: p, spec: spec, vars: map[string]int16{}, skbArg: skbArg}
	g.vs.g = g
	ps := &ebpf.ProgramSpec{Name: name, License: "GPL"}
	switch spec.Spec.Kind {
	case lang.ProbeTracepoint:
		g.ctx = ctxArgs
		ps.Type, ps.AttachType, ps.AttachTo = ebpf.Tracing, ebpf.AttachTraceRawTp, spec.Spec.Name
	case lang.ProbeFentry:
		g.ctx = ctxArgs
		ps.Type, ps.AttachType, ps.AttachTo = ebpf.Tracing, ebpf.AttachTraceFEntry, spec.Spec.Target
	case lang.ProbeFexit:
		g.ctx = ctxArgs
		ps.Type, ps.AttachType, ps.AttachTo = ebpf.Tracing, ebpf.AttachTraceFExit, spec.Spec.Target
	case lang.ProbeKprobe:
		g.ctx = ctxRegs
		ps.Type, ps.AttachTo = ebpf.Kprobe, spec.Spec.Target
	case lang.ProbeSkb:
		// The kprobe form; the runtime attaches it with kprobe-multi or
		// kprobes, to every function whose skb is at argument skbArg.
		g.ctx = ctxRegs
		ps.Type = ebpf.Kprobe
	default:
		return nil, fmt.Errorf("%s probes are not compiled yet", spec.Spec.Kind)
	}
	// R9 keeps the context for the whole program.
	g.emit(asm.Mov.Reg(asm.R9, asm.R1))
	if p.Pred != nil {
		if err := g.expr(p.Pred); err != nil {
			return nil, err
		}
		g.vs.pop(asm.R0)
		g.emit(asm.JEq.Imm(asm.R0, 0, exitLabel))
	}
	if err := g.block(p.Body); err != nil {
		return nil, err
	}
	g.emit(
		asm.Mov.Imm(asm.R0, 0).WithSymbol(exitLabel),
		asm.Return(),
	)
	ps.Instructions = g.insns
	return &Program{Probe: p, Spec: spec, Name: name, Prog: ps, SkbArg: skbArg}, nil
}

// unsupportedError is a construct the generator does not handle yet.
type unsupportedError struct {
	span lang.Span
	what string
}

func (e *unsupportedError) Error() string {
	return fmt.Sprintf("%s: %s is not compiled yet", e.span.Start, e.what)
}

func unsupported(n lang.Node, what string) error {
	return &unsupportedError{span: n.Span(), what: what}
}
