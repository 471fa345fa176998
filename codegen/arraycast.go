package codegen

import (
	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
)

// arrayCastInto writes bpftrace's array cast (int8[8])x at the frame
// offset at: an integer's bytes as memory holds them (the value, cut to
// the array's size), or an array's as they are.
func (g *gen) arrayCastInto(c *lang.CastExpr, at int16) error {
	t := g.info.Types[c]
	src := g.info.Types[c.X]
	if src.Kind == types.Array {
		return g.into(c.X, at, SlotSize(t))
	}
	if err := g.expr(c.X); err != nil {
		return err
	}
	g.vs.pop(asm.R0)
	if t.Size < 8 {
		g.fit(asm.R0, types.Type{Kind: types.Int, Size: t.Size})
	}
	g.emit(asm.StoreMem(asm.RFP, at, asm.R0, asm.DWord))
	return nil
}

// arrayAddr puts the address of an array or string in dst: a variable's
// slot on the stack (read as any address is), or a member's in memory.
func (g *gen) arrayAddr(e lang.Expr, dst asm.Register) error {
	if v, ok := lang.Unparen(e).(*lang.VarExpr); ok {
		if slot, ok := g.vars[v.Name]; ok {
			g.emit(asm.Mov.Reg(dst, asm.RFP), asm.Add.Imm(dst, int32(slot)))
			return nil
		}
	}
	return g.memberAddr(e, "indexing this value", dst)
}

// arrayToInt pushes (uint64)a of an array a: its bytes as memory holds
// them, read as the integer.
func (g *gen) arrayToInt(c *lang.CastExpr) error {
	t := g.info.Types[c]
	if err := g.arrayAddr(c.X, asm.R0); err != nil {
		return err
	}
	if err := g.vs.push(asm.R0); err != nil {
		return err
	}
	return g.readScalarFrom(g.info.Types[c.X].User, 0, check.Member{}, t, false)
}

// boolCast pushes bpftrace's (bool)x: 1 where an integer or pointer is
// not 0, or a string not empty (its first byte not NUL).
func (g *gen) boolCast(c *lang.CastExpr) error {
	if g.info.Types[c.X].Kind == types.String {
		size := SlotSize(g.info.Types[c.X])
		at, err := g.frame.alloc(size)
		if err != nil {
			return err
		}
		if err := g.into(c.X, at, size); err != nil {
			return err
		}
		g.emit(asm.LoadMem(asm.R0, asm.RFP, at, asm.Byte))
	} else {
		if err := g.expr(c.X); err != nil {
			return err
		}
		g.vs.pop(asm.R0)
	}
	zero := g.label("false")
	g.emit(asm.JEq.Imm(asm.R0, 0, zero), asm.Mov.Imm(asm.R0, 1))
	g.mark(zero)
	return g.vs.push(asm.R0)
}

// arrayInto copies an array member's bytes, ptr->x, into the slot at:
// bpftrace's `$a = ptr->x`, indexed after.
func (g *gen) arrayInto(e lang.Expr, at int16, size int) error {
	if err := g.memberAddr(e, "copying this array", asm.R3); err != nil {
		return err
	}
	g.probeRead(at, min(size, g.info.Types[e].Size))
	return nil
}
