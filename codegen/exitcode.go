package codegen

import (
	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/lang"
)

// exitCode sends exit(code)'s record where the code is known only when
// the probe runs: the event's ID, then the code (Event.CodeInRecord).
func (g *gen) exitCode(ev *Event, code lang.Expr) error {
	if err := g.expr(code); err != nil {
		return err
	}
	ev.ID, ev.Size, ev.Probe, ev.End = len(g.out.Events), 16, g.spec.Spec.Name, g.spec.Spec.Kind == lang.ProbeEnd
	ev.CodeInRecord = true
	rec, err := g.frame.alloc(16)
	if err != nil {
		return err
	}
	g.maps.eventMaps()
	g.vs.pop(asm.R0)
	g.emit(storeImm64(rec, int32(ev.ID)), asm.StoreMem(asm.RFP, rec+8, asm.R0, asm.DWord))
	g.submit(rec, 16)
	g.out.Events = append(g.out.Events, ev)
	return nil
}
