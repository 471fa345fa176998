package codegen

import (
	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/stdlib"
)

// DivZeroWarning is bpftrace's runtime warning where a divisor is 0.
const DivZeroWarning = "WARNING: Divide or modulo by 0 detected. This can lead to unexpected results. 1 is being used as the result."

// divide compiles x / y and x % y of a divisor known only when the probe
// runs (R0 x, R1 y) as bpftrace does: where y is 0 the result is 1, and a
// warning with the operation's place is printed (a printf record).
func (g *gen) divide(e *lang.BinaryExpr, op asm.ALUOp) error {
	ok, done := g.label("divisor"), g.label("divided")
	g.emit(asm.JNE.Imm(asm.R1, 0, ok))
	if err := g.warning(g.info.Where(e) + ": " + DivZeroWarning + "\n"); err != nil {
		return err
	}
	g.emit(asm.Mov.Imm(asm.R0, 1), asm.Ja.Label(done), op.Reg(asm.R0, asm.R1).WithSymbol(ok))
	g.mark(done)
	return g.vs.push(asm.R0)
}

// warning sends a record that prints a fixed text, as printf of it
// would; it uses R0 to R5.
func (g *gen) warning(text string) error {
	ev := &Event{ID: len(g.out.Events), Kind: EventPrintf, Size: 8, Verbs: []stdlib.Verb{{Text: text}},
		Probe: g.spec.Spec.Name + g.target.Name, End: g.spec.Spec.Kind == lang.ProbeEnd}
	rec, err := g.frame.alloc(ev.Size)
	if err != nil {
		return err
	}
	g.maps.eventMaps()
	g.emit(storeImm64(rec, int32(ev.ID)))
	g.submit(rec, ev.Size)
	g.out.Events = append(g.out.Events, ev)
	return nil
}
