package codegen

import (
	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/lang"
)

// addrOf pushes &$x: the address of the variable's slot on the BPF
// stack (R10 plus its offset). bpf_probe_read_kernel reads it back
// (*$p), as it reads any kernel address.
func (g *gen) addrOf(e *lang.UnaryExpr) error {
	v, _ := lang.Unparen(e.X).(*lang.VarExpr)
	if v == nil {
		return unsupported(e, "& of this expression")
	}
	slot, err := g.varSlot(v.Name, SlotSize(g.info.Types[e.X]))
	if err != nil {
		return err
	}
	g.emit(asm.Mov.Reg(asm.R0, asm.RFP), asm.Add.Imm(asm.R0, int32(slot)))
	return g.vs.push(asm.R0)
}
