package codegen

import (
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
)

// ptrArith compiles p + n, n + p and p - n as C does: n elements of what
// p points at (a byte where that has no size, void).
func (g *gen) ptrArith(e *lang.BinaryExpr) error {
	ptrFirst := g.info.Types[e.X].Kind == types.Ptr
	p := e.X
	if !ptrFirst {
		p = e.Y
	}
	size := int32(1)
	if n, err := btf.Sizeof(g.info.Types[p].BTF); err == nil && n > 0 {
		size = int32(n)
	}
	if err := g.expr(e.X); err != nil {
		return err
	}
	if err := g.expr(e.Y); err != nil {
		return err
	}
	g.vs.pop(asm.R1)
	g.vs.pop(asm.R0)
	if !ptrFirst {
		g.emit(asm.Mov.Reg(asm.R2, asm.R0), asm.Mov.Reg(asm.R0, asm.R1), asm.Mov.Reg(asm.R1, asm.R2))
	}
	if size != 1 {
		g.emit(asm.Mul.Imm(asm.R1, size))
	}
	op := asm.Add
	if e.Op == "-" {
		op = asm.Sub
	}
	g.emit(op.Reg(asm.R0, asm.R1))
	return g.vs.push(asm.R0)
}
