package codegen

import (
	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/stdlib"
)

// globmatch pushes whether a string matches a glob known when the
// script is compiled. The pattern's states are the bits of R3: bit j is
// set where the first j tokens match the bytes read so far. Each byte
// (unrolled, up to the string's NUL) moves the states into R4: token j
// that takes the byte sets bit j+1, a star keeps bit j; then each set
// star's bit sets the next (a star matches nothing too). The string
// matches where, at its end, the bit past the last token is set.
func (g *gen) globmatch(c *lang.CallExpr) error {
	toks, err := stdlib.ParseGlob(g.info.Consts[c.Args[1]].Str)
	if err != nil {
		return err // the checker reported it
	}
	at, size, err := g.stringSlot(c.Args[0], 0)
	if err != nil {
		return err
	}
	end, fail, done := g.label("globend"), g.label("globfail"), g.label("glob")
	g.emit(asm.Mov.Imm(asm.R3, 1))
	g.globStars(asm.R3, toks)
	for i := range size {
		g.emit(
			asm.LoadMem(asm.R1, asm.RFP, at+int16(i), asm.Byte),
			asm.JEq.Imm(asm.R1, 0, end),
			asm.Mov.Imm(asm.R4, 0),
		)
		for j, t := range toks {
			g.globStep(j, t)
		}
		g.globStars(asm.R4, toks)
		g.emit(asm.Mov.Reg(asm.R3, asm.R4), asm.JEq.Imm(asm.R3, 0, fail))
	}
	g.mark(end)
	g.emit(
		asm.RSh.Imm(asm.R3, int32(len(toks))),
		asm.And.Imm(asm.R3, 1),
		asm.Mov.Reg(asm.R0, asm.R3),
		asm.Ja.Label(done),
		asm.Mov.Imm(asm.R0, 0).WithSymbol(fail),
	)
	g.mark(done)
	return g.vs.push(asm.R0)
}

// globStep moves state j over the byte in R1 into R4.
func (g *gen) globStep(j int, t stdlib.GlobToken) {
	skip := g.label("globskip")
	g.emit(asm.Mov.Reg(asm.R2, asm.R3), asm.And.Imm(asm.R2, 1<<j), asm.JEq.Imm(asm.R2, 0, skip))
	if t.Star {
		g.emit(asm.Or.Imm(asm.R4, 1<<j))
		g.mark(skip)
		return
	}
	in, set := g.label("globin"), g.label("globset")
	for _, r := range t.Ranges {
		next := g.label("globrange")
		g.emit(asm.JLT.Imm(asm.R1, int32(r[0]), next), asm.JLE.Imm(asm.R1, int32(r[1]), in))
		g.mark(next)
	}
	// Out of every range: a negated class takes the byte.
	if t.Negate {
		g.emit(asm.Ja.Label(set))
		g.emit(asm.Ja.Label(skip).WithSymbol(in))
	} else {
		g.emit(asm.Ja.Label(skip))
		g.mark(in)
	}
	g.emit(asm.Or.Imm(asm.R4, 1<<(j+1)).WithSymbol(set))
	g.mark(skip)
}

// globStars sets, in r, the bit after each set star's.
func (g *gen) globStars(r asm.Register, toks []stdlib.GlobToken) {
	for j, t := range toks {
		if !t.Star {
			continue
		}
		skip := g.label("globstar")
		g.emit(asm.Mov.Reg(asm.R2, r), asm.And.Imm(asm.R2, 1<<j), asm.JEq.Imm(asm.R2, 0, skip), asm.Or.Imm(r, 1<<(j+1)))
		g.mark(skip)
	}
}
