package codegen

import (
	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/lang"
)

// stringSlot writes the value of e (a string or an array) to a zeroed
// slot of at least size bytes, returning its offset and its size.
func (g *gen) stringSlot(e lang.Expr, size int) (int16, int, error) {
	own := SlotSize(g.info.Types[e])
	size = (max(size, own) + 7) &^ 7
	at, err := g.frame.alloc(size)
	if err != nil {
		return 0, 0, err
	}
	g.zero(at, size)
	return at, size, g.into(e, at, own)
}

// strlen pushes the length of a string: the index of its first NUL,
// each byte tested in turn (unrolled), or its size where it has none.
func (g *gen) strlen(c *lang.CallExpr) error {
	at, size, err := g.stringSlot(c.Args[0], 0)
	if err != nil {
		return err
	}
	done := g.label("strlen")
	for i := range size {
		g.emit(
			asm.Mov.Imm(asm.R0, int32(i)),
			asm.LoadMem(asm.R1, asm.RFP, at+int16(i), asm.Byte),
			asm.JEq.Imm(asm.R1, 0, done),
		)
	}
	g.emit(asm.Mov.Imm(asm.R0, int32(size)))
	g.mark(done)
	return g.vs.push(asm.R0)
}

// strstr pushes where the needle, a string known when the script is
// compiled, first is in the haystack, or -1: as strcontains tests each
// position, unrolled.
func (g *gen) strstr(c *lang.CallExpr) error {
	needle := g.info.Consts[c.Args[1]].Str
	if needle == "" {
		g.emit(asm.Mov.Imm(asm.R0, 0))
		return g.vs.push(asm.R0)
	}
	at, size, err := g.stringSlot(c.Args[0], 0)
	if err != nil {
		return err
	}
	done := g.label("strstr")
	for i := 0; i+len(needle) <= size; i++ {
		next := g.label("pos")
		for j := 0; j < len(needle); j++ {
			g.emit(
				asm.LoadMem(asm.R1, asm.RFP, at+int16(i+j), asm.Byte),
				asm.JNE.Imm(asm.R1, int32(needle[j]), next),
			)
		}
		g.emit(asm.Mov.Imm(asm.R0, int32(i)), asm.Ja.Label(done))
		g.mark(next)
	}
	g.emit(asm.Mov.Imm(asm.R0, -1))
	g.mark(done)
	return g.vs.push(asm.R0)
}

// memcmp pushes the comparison of the first count bytes (a constant) of
// two strings or arrays: 0 where they agree, else the first differing
// byte of the left less that of the right. Bytes past a value's end are
// zeros.
func (g *gen) memcmp(c *lang.CallExpr) error {
	n64, _ := g.info.ConstInt(c.Args[2])
	n := int(n64)
	left, _, err := g.stringSlot(c.Args[0], n)
	if err != nil {
		return err
	}
	right, _, err := g.stringSlot(c.Args[1], n)
	if err != nil {
		return err
	}
	differ, done := g.label("differ"), g.label("memcmp")
	for i := range n {
		g.emit(
			asm.LoadMem(asm.R0, asm.RFP, left+int16(i), asm.Byte),
			asm.LoadMem(asm.R1, asm.RFP, right+int16(i), asm.Byte),
			asm.JNE.Reg(asm.R0, asm.R1, differ),
		)
	}
	g.emit(
		asm.Mov.Imm(asm.R0, 0),
		asm.Ja.Label(done),
		asm.Sub.Reg(asm.R0, asm.R1).WithSymbol(differ),
	)
	g.mark(done)
	return g.vs.push(asm.R0)
}
