package codegen

import (
	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
)

var aluOps = map[string]asm.ALUOp{
	"+": asm.Add, "-": asm.Sub, "*": asm.Mul, "/": asm.Div, "%": asm.Mod,
	"&": asm.And, "|": asm.Or, "^": asm.Xor, "<<": asm.LSh, ">>": asm.RSh,
}

// jump ops for comparisons: unsigned and signed.
var cmpOps = map[string][2]asm.JumpOp{
	"==": {asm.JEq, asm.JEq}, "!=": {asm.JNE, asm.JNE},
	"<": {asm.JLT, asm.JSLT}, "<=": {asm.JLE, asm.JSLE},
	">": {asm.JGT, asm.JSGT}, ">=": {asm.JGE, asm.JSGE},
}

func (g *gen) unary(e *lang.UnaryExpr) error {
	if e.Op == "&" {
		return g.addrOf(e)
	}
	if err := g.expr(e.X); err != nil {
		return err
	}
	if e.Op == "*" {
		// *p and bpftrace's *ADDRESS: the value there, read with
		// bpf_probe_read_kernel (bpf_probe_read_user for a user pointer).
		return g.readScalarFrom(g.info.Types[e.X].User, 0, check.Member{}, g.info.Types[e], false)
	}
	g.vs.pop(asm.R0)
	switch e.Op {
	case "-":
		g.emit(asm.Neg.Imm(asm.R0, 0))
	case "~":
		g.emit(asm.Xor.Imm(asm.R0, -1))
	case "!":
		done := g.label("not")
		g.emit(
			asm.Mov.Reg(asm.R1, asm.R0),
			asm.Mov.Imm(asm.R0, 1),
			asm.JEq.Imm(asm.R1, 0, done),
			asm.Mov.Imm(asm.R0, 0),
		)
		g.mark(done)
	case "+":
	default:
		return unsupported(e, "unary "+e.Op)
	}
	return g.vs.push(asm.R0)
}

func (g *gen) binary(e *lang.BinaryExpr) error {
	switch {
	case e.Op == "&&" || e.Op == "||":
		return g.logical(e)
	case g.isAddr(e.X):
		return g.addrCompare(e)
	case g.info.Types[e.X].Kind == types.String && g.info.Types[e.Y].Kind == types.String:
		return g.compareBlobs(e)
	case g.info.Types[e.X].Kind == types.Tuple:
		return g.compareTuples(e)
	}
	if name, ok := g.info.FuncNames[e]; ok {
		return g.funcCompare(e, name)
	}
	if name, ok := g.info.ProbeNames[e]; ok {
		return g.probeCompare(e, name)
	}
	if g.info.Types[e].Kind == types.Ptr {
		return g.ptrArith(e)
	}
	op, isALU := aluOps[e.Op]
	if !isALU {
		if _, ok := cmpOps[e.Op]; !ok {
			return unsupported(e, "operator "+e.Op)
		}
		return g.logical(e)
	}
	k, imm, err := g.operands(e)
	if err != nil {
		return err
	}
	signed := g.info.Types[e].Signed
	switch {
	case e.Op == ">>" && signed:
		op = asm.ArSh
	case (e.Op == "/" || e.Op == "%") && signed:
		// BPF_SDIV and BPF_SMOD: Linux 6.6 and later.
		op += asm.SDiv - asm.Div
	}
	switch {
	case imm:
		g.emit(op.Imm(asm.R0, int32(k)))
	case e.Op == "/" || e.Op == "%":
		return g.divide(e, op)
	default:
		g.emit(op.Reg(asm.R0, asm.R1))
	}
	return g.vs.push(asm.R0)
}

// logical evaluates a condition (a comparison, &&, ||) to 1 or 0, through
// branch: && and || short-circuit.
func (g *gen) logical(e *lang.BinaryExpr) error {
	no, done := g.label("false"), g.label("logic")
	if err := g.branch(e, no, false); err != nil {
		return err
	}
	g.emit(asm.Mov.Imm(asm.R0, 1), asm.Ja.Label(done))
	g.emit(asm.Mov.Imm(asm.R0, 0).WithSymbol(no))
	g.mark(done)
	return g.vs.push(asm.R0)
}

// cond evaluates c ? a : b; both branches leave one entry on the stack.
func (g *gen) cond(e *lang.CondExpr) error {
	value := func(x lang.Expr) func() error {
		return func() error {
			if err := g.expr(x); err != nil {
				return err
			}
			g.vs.pop(asm.R0)
			return nil
		}
	}
	if err := g.ifElse(e.Cond, value(e.Then), value(e.Else)); err != nil {
		return err
	}
	return g.vs.push(asm.R0)
}

// ifElse emits `if (cond) then() else els()`; els may be nil.
func (g *gen) ifElse(cond lang.Expr, then, els func() error) error {
	elseL, done := g.label("else"), g.label("endif")
	if err := g.branch(cond, elseL, false); err != nil {
		return err
	}
	if err := then(); err != nil {
		return err
	}
	g.emit(asm.Ja.Label(done))
	g.mark(elseL)
	if els != nil {
		if err := els(); err != nil {
			return err
		}
	}
	g.mark(done)
	return nil
}

// funcCompare compiles `func == "NAME"`: the address compared with NAME's,
// or with its tracepoint's __traceiter_NAME where skb: falls back to
// tracepoints. A name the kernel does not have matches nothing.
func (g *gen) funcCompare(e *lang.BinaryExpr, name string) error {
	side := e.X
	if g.info.Types[side].Kind == types.String {
		side = e.Y
	}
	if err := g.expr(side); err != nil {
		return err
	}
	g.vs.pop(asm.R1)
	match, done := g.label("fnmatch"), g.label("fndone")
	if g.ksym != nil {
		for _, sym := range []string{name, "__traceiter_" + name} {
			if a := g.ksym(sym); a != 0 {
				g.emit(asm.LoadImm(asm.R2, int64(a), asm.DWord), asm.JEq.Reg(asm.R1, asm.R2, match))
			}
		}
	}
	eq, ne := int32(1), int32(0)
	if e.Op == "!=" {
		eq, ne = 0, 1
	}
	g.emit(asm.Mov.Imm(asm.R0, ne), asm.Ja.Label(done))
	g.emit(asm.Mov.Imm(asm.R0, eq).WithSymbol(match))
	g.mark(done)
	return g.vs.push(asm.R0)
}
