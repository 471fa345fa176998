package codegen

import (
	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
)

// A struct value (check/structvalue.go): its bytes copied into a slot
// of the frame, from the memory a pointer points to (*p), a struct
// member (p->se.load), or the probe's arguments (args).

// structInto writes the struct value e into the zeroed slot of size
// bytes at.
func (g *gen) structInto(e lang.Expr, at int16, size int) error {
	t := g.info.Types[e]
	n := min(size, t.Size)
	switch x := lang.Unparen(e).(type) {
	case *lang.Ident:
		if x.Name != "args" {
			break
		}
		if g.ctx == ctxRecord {
			// A classic tracepoint's record, as it is.
			g.emit(asm.Mov.Reg(asm.R3, asm.R9))
			g.probeRead(at, n)
			return nil
		}
		// One argument in each 8 bytes, as argsStruct lays them out.
		for i, p := range g.info.Probes[g.probe].Params {
			if err := g.loadArg(asm.R0, p.Index); err != nil {
				return err
			}
			g.emit(asm.StoreMem(asm.RFP, at+int16(8*i), asm.R0, asm.DWord))
		}
		return nil
	case *lang.UnaryExpr:
		if x.Op != "*" {
			break
		}
		if err := g.expr(x.X); err != nil {
			return err
		}
		g.vs.pop(asm.R3)
		g.readStruct(t, at, n)
		return nil
	}
	if err := g.memberAddr(e, "copying this struct", asm.R3); err != nil {
		return err
	}
	g.readStruct(t, at, n)
	return nil
}

// readStruct reads n bytes of a struct at the address in R3 into the
// slot at: from the traced process's memory where it was reached
// through a user pointer.
func (g *gen) readStruct(t types.Type, at int16, n int) {
	if t.User {
		g.readWith(asm.FnProbeReadUser, at, n)
		return
	}
	g.probeRead(at, n)
}

// frameStructAddr puts in dst the address of a struct value kept in the
// frame: a variable's slot, or a copy of it made now (a map's value, a
// conditional's). ok is false where e is read from memory instead.
func (g *gen) frameStructAddr(e lang.Expr, dst asm.Register) (bool, error) {
	t := g.info.Types[e]
	if t.Kind != types.Struct {
		return false, nil
	}
	switch x := lang.Unparen(e).(type) {
	case *lang.VarExpr:
		if slot, ok := g.vars[x.Name]; ok {
			g.emit(asm.Mov.Reg(dst, asm.RFP), asm.Add.Imm(dst, int32(slot)))
			return true, nil
		}
	case *lang.FieldExpr, *lang.IndexExpr:
		return false, nil
	case *lang.UnaryExpr:
		if x.Op == "*" {
			// (*p).a: the address is p.
			if err := g.expr(x.X); err != nil {
				return false, err
			}
			g.vs.pop(dst)
			return true, nil
		}
	}
	size := SlotSize(t)
	tmp, err := g.frame.alloc(size)
	if err != nil {
		return false, err
	}
	if err := g.into(e, tmp, size); err != nil {
		return false, err
	}
	g.emit(asm.Mov.Reg(dst, asm.RFP), asm.Add.Imm(dst, int32(tmp)))
	return true, nil
}
