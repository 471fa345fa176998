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
	k, known := g.info.Consts[c.Args[1]]
	if !known || !k.IsStr {
		return g.strcontainsRuntime(c)
	}
	needle := k.Str
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

// strcontainsRuntime is strcontains of a needle known only when the
// probe runs: both strings are written to zeroed slots, and at each
// position of the haystack each byte of the needle is compared in turn
// (unrolled, haystack by needle): a NUL of the needle ends it, found; a
// byte that differs, or the haystack's end, moves to the next position.
func (g *gen) strcontainsRuntime(c *lang.CallExpr) error {
	hay, hsize, err := g.stringSlot(c.Args[0], 0)
	if err != nil {
		return err
	}
	needle, nsize, err := g.stringSlot(c.Args[1], 0)
	if err != nil {
		return err
	}
	found, done := g.label("found"), g.label("contains")
	for i := range hsize {
		next := g.label("pos")
		for j := range nsize {
			g.emit(
				asm.LoadMem(asm.R1, asm.RFP, needle+int16(j), asm.Byte),
				asm.JEq.Imm(asm.R1, 0, found),
			)
			if i+j >= hsize {
				break
			}
			g.emit(
				asm.LoadMem(asm.R2, asm.RFP, hay+int16(i+j), asm.Byte),
				asm.JNE.Reg(asm.R1, asm.R2, next),
			)
		}
		// The needle's every byte matched (it has no NUL in its slot),
		// or the haystack ended first.
		if i+nsize <= hsize {
			g.emit(asm.Ja.Label(found))
		} else {
			g.emit(asm.Ja.Label(next))
		}
		g.mark(next)
	}
	g.emit(asm.Mov.Imm(asm.R0, 0), asm.Ja.Label(done), asm.Mov.Imm(asm.R0, 1).WithSymbol(found))
	g.mark(done)
	return g.vs.push(asm.R0)
}
