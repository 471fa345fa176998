package codegen

import (
	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
)

// branch compiles a condition as jumps: to target where the condition's
// truth is jumpIf, falling through otherwise. Comparisons become one
// conditional jump, !, && and || route between them, so predicates and ifs
// build no 0 or 1 to test; any other value is tested against 0.
func (g *gen) branch(e lang.Expr, target string, jumpIf bool) error {
	switch x := lang.Unparen(e).(type) {
	case *lang.UnaryExpr:
		if x.Op == "!" {
			return g.branch(x.X, target, !jumpIf)
		}
	case *lang.BinaryExpr:
		switch {
		case x.Op == "&&" || x.Op == "||":
			// a && b is false when a is; a || b is true when a is.
			decided := x.Op == "||"
			if jumpIf == decided {
				if err := g.branch(x.X, target, jumpIf); err != nil {
					return err
				}
				return g.branch(x.Y, target, jumpIf)
			}
			skip := g.label("short")
			if err := g.branch(x.X, skip, decided); err != nil {
				return err
			}
			if err := g.branch(x.Y, target, jumpIf); err != nil {
				return err
			}
			g.mark(skip)
			return nil
		case g.plainCompare(x):
			return g.compareJump(x, target, jumpIf)
		}
	}
	if err := g.expr(e); err != nil {
		return err
	}
	g.vs.pop(asm.R0)
	if jumpIf {
		g.emit(asm.JNE.Imm(asm.R0, 0, target))
	} else {
		g.emit(asm.JEq.Imm(asm.R0, 0, target))
	}
	return nil
}

// plainCompare reports whether e compares two integers (not addresses,
// strings or func with a name), which one jump decides.
func (g *gen) plainCompare(e *lang.BinaryExpr) bool {
	if _, ok := cmpOps[e.Op]; !ok {
		return false
	}
	if g.isAddr(e.X) || (g.info.Types[e.X].Kind == types.String && g.info.Types[e.Y].Kind == types.String) || g.info.Types[e.X].Kind == types.Tuple {
		return false
	}
	_, named := g.info.FuncNames[e]
	_, probe := g.info.ProbeNames[e]
	return !named && !probe
}

// compareJump emits a comparison of two integers as one jump to target,
// taken where the comparison's truth is jumpIf.
func (g *gen) compareJump(e *lang.BinaryExpr, target string, jumpIf bool) error {
	ops := cmpOps[e.Op]
	jump := ops[0]
	if types.SignedOp(g.info.Types[e.X], g.info.Types[e.Y]) {
		jump = ops[1]
	}
	if !jumpIf {
		jump = invertedJump[jump]
	}
	k, imm, err := g.operands(e)
	if err != nil {
		return err
	}
	if imm {
		g.emit(jump.Imm(asm.R0, int32(k), target))
	} else {
		g.emit(jump.Reg(asm.R0, asm.R1, target))
	}
	return nil
}

// operands evaluates a binary expression's operands: the left into R0, the
// right into R1 unless it is a constant that serves as the immediate k
// (the same 64-bit value, sign-extended). Not a zero divisor (the verifier
// refuses one; a register's gives 0) nor a shift outside 0-63 (refused
// too).
func (g *gen) operands(e *lang.BinaryExpr) (k int64, imm bool, err error) {
	if err := g.expr(e.X); err != nil {
		return 0, false, err
	}
	k, imm = g.constValue(e.Y)
	imm = imm && fitsImm(k)
	switch e.Op {
	case "/", "%":
		imm = imm && k != 0
	case "<<", ">>":
		imm = imm && k >= 0 && k < 64
	}
	if !imm {
		if err := g.expr(e.Y); err != nil {
			return 0, false, err
		}
		g.vs.pop(asm.R1)
	}
	g.vs.pop(asm.R0)
	return k, imm, nil
}
