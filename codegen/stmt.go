package codegen

import (
	"slices"

	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/lang"
)

func (g *gen) block(b *lang.Block) error {
	for _, s := range b.Stmts {
		if s == g.nfAt {
			if err := g.nfScan(); err != nil {
				return err
			}
		}
		m := g.frame.mark()
		if err := g.stmt(s); err != nil {
			return err
		}
		g.frame.release(m)
	}
	return nil
}

func (g *gen) stmt(s lang.Stmt) error {
	switch s := s.(type) {
	case *lang.Block:
		return g.block(s)
	case *lang.IfStmt:
		var els func() error
		if s.Else != nil {
			els = func() error { return g.stmt(s.Else) }
		}
		return g.ifElse(s.Cond, func() error { return g.block(s.Then) }, els)
	case *lang.AssignStmt:
		switch t := s.Target.(type) {
		case *lang.VarExpr:
			return g.assignVar(s, t)
		case *lang.MapExpr:
			return g.assignMap(s, t)
		}
	case *lang.LetStmt:
		return g.let(s)
	case *lang.ForStmt:
		return g.forStmt(s)
	case *lang.WhileStmt:
		return g.whileStmt(s)
	case *lang.UnrollStmt:
		return g.unroll(s)
	case *lang.JumpStmt:
		return g.jump(s)
	case *lang.ExprStmt:
		if lang.EmptyTuple(s.X) {
			return nil // (): nothing to do
		}
		if c, ok := s.X.(*lang.CallExpr); ok {
			switch c.Name {
			case "printf", "print", "time", "cat", "errorf", "warnf", "debugf":
				return g.output(s, c)
			case "exit":
				if g.testProbe() {
					return g.testExit(c)
				}
				// bpftrace's exit() ends the action at once, as return does.
				ev := &Event{Kind: EventExit}
				if len(c.Args) == 1 {
					code, ok := g.info.ConstInt(c.Args[0])
					ev.Code = int(code)
					if !ok {
						if err := g.exitCode(ev, c.Args[0]); err != nil {
							return err
						}
						g.probeReturn()
						return nil
					}
				}
				if err := g.control(ev); err != nil {
					return err
				}
				g.probeReturn()
				return nil
			case "delete":
				if m, ok := c.Args[0].(*lang.MapExpr); ok && len(m.Keys) == 0 {
					return g.control(&Event{Kind: EventClearMap, Map: m.Name})
				}
				if m, ok := c.Args[0].(*lang.MapExpr); ok {
					return g.deleteElem(m)
				}
			case "track":
				return g.track()
			case "static_assert", "fail", "assert_str":
				return nil // the checker decided them
			case "capture":
				return g.capture(c)
			case "join":
				return g.join(c)
			case "clear", "zero":
				if m, ok := c.Args[0].(*lang.MapExpr); ok {
					kind := EventClearMap
					if c.Name == "zero" {
						kind = EventZeroMap
					}
					return g.control(&Event{Kind: kind, Map: m.Name})
				}
			}
			return unsupported(s, c.Name+"()")
		}
	}
	return unsupported(s, "this statement")
}

// let declares a variable: `let $x = v` assigns it, `let $x;` sets it
// to zero here (bpftrace's declared variables start at zero).
func (g *gen) let(s *lang.LetStmt) error {
	if s.Value != nil {
		return g.assignVar(&lang.AssignStmt{At: s.At, Target: s.Var, Op: "=", Value: s.Value}, s.Var)
	}
	t, ok := g.info.Vars[g.probe][s.Var.Name]
	if !ok {
		return nil // declared, never assigned nor read
	}
	slot, err := g.varSlot(s.Var.Name, SlotSize(t))
	if err != nil {
		return err
	}
	for off := 0; off < SlotSize(t); off += 8 {
		g.emit(zero8(slot + int16(off))...)
	}
	return nil
}

// varSlot returns the stack slot of a variable, made on first use.
func (g *gen) varSlot(name string, size int) (int16, error) {
	if slot, ok := g.vars[name]; ok {
		return slot, nil
	}
	slot, err := g.frame.keep(size)
	if err != nil {
		return 0, err
	}
	g.vars[name] = slot
	// Variables start at zero, whichever branch assigns them first: at the
	// program's start, or a callback's after its entry.
	var zero asm.Instructions
	for off := 0; off < size; off += 8 {
		zero = append(zero, zero8(slot+int16(off))...)
	}
	g.insns = slices.Insert(g.insns, g.varsAt, zero...)
	return slot, nil
}

// assignVar stores a value into the variable's stack slot.
func (g *gen) assignVar(s *lang.AssignStmt, v *lang.VarExpr) error {
	t := g.info.Vars[g.probe][v.Name]
	size := SlotSize(t)
	slot, err := g.varSlot(v.Name, size)
	if err != nil {
		return err
	}
	if !inReg(t) {
		return g.intoType(s.Value, slot, t)
	}
	if err := g.expr(s.Value); err != nil {
		return err
	}
	g.vs.pop(asm.R1)
	if s.Op != "=" {
		op, ok := aluOps[s.Op[:len(s.Op)-1]]
		if !ok {
			return unsupported(s, s.Op)
		}
		if t.Signed && (op == asm.Div || op == asm.Mod) {
			op += asm.SDiv - asm.Div
		}
		g.emit(asm.LoadMem(asm.R0, asm.RFP, slot, asm.DWord), op.Reg(asm.R0, asm.R1), asm.Mov.Reg(asm.R1, asm.R0))
	}
	// A variable keeps the width of what it holds, as in bpftrace: $dport
	// of a __be16 is 16 bits, and bswap($dport) swaps two bytes.
	g.fit(asm.R1, t)
	g.emit(asm.StoreMem(asm.RFP, slot, asm.R1, asm.DWord))
	return nil
}
