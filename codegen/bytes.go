package codegen

import (
	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
)

// macaddr pushes the 6 bytes at a pointer, or in an array member, as the
// low bytes of an integer (memory order), which prints as a MAC address.
func (g *gen) macaddr(c *lang.CallExpr) error {
	arg := c.Args[0]
	if g.info.Types[arg].IsScalar() {
		if err := g.expr(arg); err != nil {
			return err
		}
		g.vs.pop(asm.R3)
	} else if err := g.memberAddr(arg, "macaddr of this value; pass a pointer or a byte array member such as skb->dev->dev_addr", asm.R3); err != nil {
		return err
	}
	slot, err := g.readScratch()
	if err != nil {
		return err
	}
	g.emit(zero8(slot)...)
	g.probeRead(slot, 6)
	g.emit(asm.LoadMem(asm.R0, asm.RFP, slot, asm.DWord))
	return g.vs.push(asm.R0)
}

// strncmp pushes 0 where two strings agree in their first n bytes, else 1.
// Both are written to zeroed slots, so bytes past a NUL are zeros in both
// and comparing bytes is comparing C strings.
func (g *gen) strncmp(c *lang.CallExpr) error {
	n := int(g.info.Consts[c.Args[2]].Int)
	size := max(SlotSize(g.info.Types[c.Args[0]]), SlotSize(g.info.Types[c.Args[1]]), (n+7)&^7)
	a, err := g.frame.alloc(size)
	if err != nil {
		return err
	}
	b, err := g.frame.alloc(size)
	if err != nil {
		return err
	}
	for i, at := range []int16{a, b} {
		if err := g.into(c.Args[i], at, size); err != nil {
			return err
		}
	}
	// "!=" pushes 0 where the bytes agree, 1 where they differ.
	return g.blobEqual(a, b, n, "!=")
}

// bufInto writes buf()'s value at the frame offset at: its length in a
// byte, then the bytes at a pointer, or in an array member.
func (g *gen) bufInto(c *lang.CallExpr, at int16) error {
	n := g.info.Types[c].Size - 1
	arg := c.Args[0]
	if t := g.info.Types[arg]; t.Kind == types.String && stringValue(arg) {
		// A string value (a literal, a variable, str()): written to a
		// zeroed slot as long as the read, then read from there.
		size := max(SlotSize(t), (n+7)&^7)
		slot, err := g.frame.alloc(size)
		if err != nil {
			return err
		}
		if err := g.into(arg, slot, size); err != nil {
			return err
		}
		g.emit(asm.Mov.Reg(asm.R3, asm.RFP), asm.Add.Imm(asm.R3, int32(slot)))
	} else if g.info.Types[arg].IsScalar() {
		if err := g.expr(arg); err != nil {
			return err
		}
		g.vs.pop(asm.R3)
	} else if err := g.memberAddr(arg, "buf of this value; pass a pointer and a length, or an array member such as args.saddr", asm.R3); err != nil {
		return err
	}
	if len(c.Args) < 2 || g.isConst(c.Args[1]) {
		g.emit(asm.StoreImm(asm.RFP, at, int64(n), asm.Byte))
		g.readWith(g.readHelper(asm.FnProbeReadKernel), at+1, n)
		return nil
	}
	// A length known when the probe runs, bounded by the type's (so the
	// verifier sees the read fit): at most n, a negative one n as well.
	if err := g.vs.push(asm.R3); err != nil {
		return err
	}
	if err := g.expr(c.Args[1]); err != nil {
		return err
	}
	g.vs.pop(asm.R2)
	g.vs.pop(asm.R3)
	fits := g.label("buflen")
	g.emit(
		asm.JLE.Imm(asm.R2, int32(n), fits),
		asm.Mov.Imm(asm.R2, int32(n)),
	)
	g.mark(fits)
	g.emit(
		asm.StoreMem(asm.RFP, at, asm.R2, asm.Byte),
		asm.Mov.Reg(asm.R1, asm.RFP),
		asm.Add.Imm(asm.R1, int32(at+1)),
		g.readHelper(asm.FnProbeReadKernel).Call(),
	)
	return nil
}

// isConst reports whether e is a constant integer.
func (g *gen) isConst(e lang.Expr) bool {
	_, ok := g.constValue(e)
	return ok
}

// stringValue reports whether buf()'s argument is a string value (a
// literal, a variable, a map element, a call's result) rather than an
// array member, which is read where it is, its bytes as they are.
func stringValue(e lang.Expr) bool {
	switch lang.Unparen(e).(type) {
	case *lang.StrLit, *lang.VarExpr, *lang.MapExpr, *lang.CallExpr, *lang.CondExpr, *lang.PosParam:
		return true
	}
	return false
}
