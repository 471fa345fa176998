package codegen

import (
	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/lang"
)

// strcontains pushes whether the haystack string holds the needle, a
// string known when the script is compiled: the haystack is written to a
// zeroed slot, and each position is compared with the needle's bytes
// (immediates), unrolled; bytes past the haystack's NUL are zeros, which
// no needle byte is, so nothing matches past its end.
func (g *gen) strcontains(c *lang.CallExpr) error {
	needle := g.info.Consts[c.Args[1]].Str
	if needle == "" {
		g.emit(asm.Mov.Imm(asm.R0, 1))
		return g.vs.push(asm.R0)
	}
	size := SlotSize(g.info.Types[c.Args[0]])
	at, err := g.frame.alloc(size)
	if err != nil {
		return err
	}
	if err := g.into(c.Args[0], at, size); err != nil {
		return err
	}
	found, done := g.label("found"), g.label("contains")
	for i := 0; i+len(needle) <= size; i++ {
		next := g.label("pos")
		for j := 0; j < len(needle); j++ {
			g.emit(
				asm.LoadMem(asm.R1, asm.RFP, at+int16(i+j), asm.Byte),
				asm.JNE.Imm(asm.R1, int32(needle[j]), next),
			)
		}
		g.emit(asm.Ja.Label(found))
		g.mark(next)
	}
	g.emit(asm.Mov.Imm(asm.R0, 0), asm.Ja.Label(done), asm.Mov.Imm(asm.R0, 1).WithSymbol(found))
	g.mark(done)
	return g.vs.push(asm.R0)
}
