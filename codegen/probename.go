package codegen

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cilium/ebpf/asm"
	"github.com/skbtrace/skbtrace/lang"
)

// The values of bpftrace's probe builtin. A program that knows its probe's
// name when it is compiled (a tracepoint, each of a glob's own; BEGIN;
// interval:s:1; a function probe on one function) puts 1 + the name's index
// in Output.ProbeNames; a program shared by many functions (skb:'s kprobe
// form, a kprobe glob under kprobe-multi) puts the function's address,
// which the runtime prints as kprobe:NAME, with bit 63 cleared on a return
// program (kretprobe:NAME, skbret:): a kernel address has it set.
// probe == "NAME" compares with the name where it is known, else with
// the named function's address in the same form (probeCompare).

// probeName is the name of the probe the program is for, as bpftrace prints
// it, or "" where only the function's address says it.
func (g *gen) probeName() string {
	sp := g.spec.Spec
	switch {
	case sp.Kind == lang.ProbeTracepoint && sp.Raw:
		return "rawtracepoint:" + sp.Target
	case sp.Kind == lang.ProbeTracepoint:
		cat := g.spec.Category
		if cat == "" {
			cat = sp.Category
		}
		return "tracepoint:" + cat + ":" + sp.Name
	case sp.Kind == lang.ProbeSkb || sp.Kind == lang.ProbeSkbRet:
		// skb: is not a bpftrace probe: it prints as the function the
		// packet is in, as bpftrace's kprobe on it would; the tracepoint
		// fallback as its tracepoint (its raw tracepoint where tracefs
		// does not list it).
		switch {
		case g.target.Fentry && g.target.Return:
			return "kretprobe:" + g.target.Name
		case g.target.Fentry:
			return "kprobe:" + g.target.Name
		case g.target.Name != "" && g.target.Category != "":
			return "tracepoint:" + g.target.Category + ":" + g.target.Name
		case g.target.Name != "":
			return "rawtracepoint:" + g.target.Name
		}
		return ""
	case sp.Kind == lang.ProbeUprobe, sp.Kind == lang.ProbeUretprobe:
		return g.spec.UserProbeName()
	case sp.Kind == lang.ProbeBpf, sp.Kind == lang.ProbeBpfRet:
		return bpfProbeName(sp.Kind, g.target.bpf)
	case sp.Kind == lang.ProbeKprobe, sp.Kind == lang.ProbeKretprobe, sp.Kind == lang.ProbeFentry, sp.Kind == lang.ProbeFexit:
		if g.target.shared {
			return ""
		}
		if sp.Offset > 0 {
			// kprobe:FN+OFFSET, the offset in decimal as bpftrace says it.
			return fmt.Sprintf("%s:%s+%d", sp.Kind, g.spec.Function(), sp.Offset)
		}
		return string(sp.Kind) + ":" + g.spec.Function()
	}
	// BEGIN, END, interval:s:1, profile:hz:99: as written, the kind's
	// short name (i:s:1) spelled out, as bpftrace prints it.
	if _, rest, ok := strings.Cut(sp.Text, ":"); ok {
		return string(sp.Kind) + ":" + rest
	}
	return sp.Text
}

// probeValue pushes the probe builtin's value onto the value stack.
func (g *gen) probeValue() error {
	if name := g.probeName(); name != "" {
		return g.nameValue(name)
	}
	if err := g.funcIP(); err != nil {
		return err
	}
	if g.target.Return || g.spec.Spec.Kind == lang.ProbeKretprobe || g.spec.Spec.Kind == lang.ProbeFexit {
		g.emit(asm.LSh.Imm(asm.R0, 1), asm.RSh.Imm(asm.R0, 1))
	}
	return g.vs.push(asm.R0)
}

// nameValue pushes a name known when the program is compiled: 1 + its
// index in Output.ProbeNames.
func (g *gen) nameValue(name string) error {
	i := slices.Index(g.out.ProbeNames, name)
	if i < 0 {
		i = len(g.out.ProbeNames)
		g.out.ProbeNames = append(g.out.ProbeNames, name)
	}
	g.emit(asm.Mov.Imm(asm.R0, int32(i+1)))
	return g.vs.push(asm.R0)
}

// probeCompare pushes whether the probe is (or, for !=, is not) the one
// named: known when the program is compiled, or, in a program shared by
// many functions, whether the function is the one kprobe:NAME or
// kretprobe:NAME names.
func (g *gen) probeCompare(e *lang.BinaryExpr, name string) error {
	eq, ne := int32(1), int32(0)
	if e.Op == "!=" {
		eq, ne = 0, 1
	}
	own := g.probeName()
	if g.bpfProgCompare(e) {
		// prog in a bpf: program: the traced program's name.
		own = g.target.bpf.Name
	}
	if g.userFuncCompare(e) {
		// func in a uprobe: the function's name.
		own = g.spec.Func
	}
	if own != "" {
		g.emit(asm.Mov.Imm(asm.R0, map[bool]int32{true: eq, false: ne}[own == name]))
		return g.vs.push(asm.R0)
	}
	ret := g.target.Return || g.spec.Spec.Kind == lang.ProbeKretprobe || g.spec.Spec.Kind == lang.ProbeFexit
	prefix := "kprobe:"
	if ret {
		prefix = "kretprobe:"
	}
	var want uint64
	if fn, ok := strings.CutPrefix(name, prefix); ok && g.ksym != nil {
		want = g.ksym(fn)
		if ret {
			want &^= 1 << 63
		}
	}
	if want == 0 {
		// Not a function this program can be for.
		g.emit(asm.Mov.Imm(asm.R0, ne))
		return g.vs.push(asm.R0)
	}
	if err := g.probeValue(); err != nil {
		return err
	}
	g.vs.pop(asm.R1)
	match, done := g.label("probematch"), g.label("probedone")
	g.emit(asm.LoadImm(asm.R2, int64(want), asm.DWord), asm.JEq.Reg(asm.R1, asm.R2, match))
	g.emit(asm.Mov.Imm(asm.R0, ne), asm.Ja.Label(done))
	g.emit(asm.Mov.Imm(asm.R0, eq).WithSymbol(match))
	g.mark(done)
	return g.vs.push(asm.R0)
}
