package passes

import "github.com/skbtrace/skbtrace/lang"

// Decide answers for a condition that has() decides (`has(...)`,
// `!has(...)`, in parentheses or not) whether it holds on this kernel; ok
// is false for any other condition.
type Decide func(cond lang.Expr) (v, ok bool)

// Answers is the Decide of answers recorded by call (check.Info.Has): a
// has() the map does not hold is not decided.
func Answers(has map[*lang.CallExpr]bool) Decide {
	var decide Decide
	decide = func(e lang.Expr) (bool, bool) {
		switch e := e.(type) {
		case *lang.UnaryExpr:
			if e.Op == "!" {
				v, ok := decide(e.X)
				return !v, ok
			}
		case *lang.ParenExpr:
			return decide(e.X)
		case *lang.CallExpr:
			v, ok := has[e]
			return v, ok
		}
		return false, false
	}
	return decide
}

// PruneHas returns the script as this kernel runs it by has()'s answers:
// a probe whose predicate (or an operand of its &&) has() rules out is
// dropped whole, the has() operands of the others' predicates are taken
// out, and every `if` whose condition has() decides is replaced by the
// branch taken (an empty block where there is none). s is not changed;
// where nothing is pruned, PruneHas returns s.
func PruneHas(s *lang.Script, has map[*lang.CallExpr]bool) *lang.Script {
	if len(has) == 0 {
		return s
	}
	decide := Answers(has)
	probes := make([]*lang.Probe, 0, len(s.Probes))
	changed := false
	for _, p := range s.Probes {
		q := pruneProbe(p, decide)
		changed = changed || q != p
		if q != nil {
			probes = append(probes, q)
		}
	}
	if !changed {
		return s
	}
	cp := *s
	cp.Probes = probes
	return &cp
}

// pruneProbe returns p pruned: nil where its predicate rules it out, p
// itself where nothing changes.
func pruneProbe(p *lang.Probe, decide Decide) *lang.Probe {
	pred := p.Pred
	if pred != nil {
		var keep bool
		if pred, keep = PrunePred(pred, decide); !keep {
			return nil
		}
	}
	body := pruneBlock(p.Body, decide)
	if pred == p.Pred && body == p.Body {
		return p
	}
	cp := *p
	cp.Pred, cp.Body = pred, body
	return &cp
}

// PrunePred decides the has() of a predicate and of the operands of its
// &&, left to right, asking no further once one is false: keep is false
// when one is; pred is what remains of the predicate (nil: nothing), e
// itself where nothing is taken out, else a copy. The checker checks
// that predicate, asking as it goes.
func PrunePred(e lang.Expr, decide Decide) (pred lang.Expr, keep bool) {
	if v, ok := decide(e); ok {
		return nil, v
	}
	b, ok := e.(*lang.BinaryExpr)
	if !ok || b.Op != "&&" {
		return e, true
	}
	x, keep := PrunePred(b.X, decide)
	if !keep {
		return nil, false
	}
	y, keep := PrunePred(b.Y, decide)
	if !keep {
		return nil, false
	}
	switch {
	case x == nil:
		return y, true
	case y == nil:
		return x, true
	case x == b.X && y == b.Y:
		return b, true
	}
	cp := *b
	cp.X, cp.Y = x, y
	return &cp, true
}

// pruneBlock returns b with its has() ifs replaced, b itself where none
// is.
func pruneBlock(b *lang.Block, decide Decide) *lang.Block {
	var stmts []lang.Stmt // nil until a statement changes
	for i, s := range b.Stmts {
		n := pruneStmt(s, decide)
		if n != s && stmts == nil {
			stmts = append(make([]lang.Stmt, 0, len(b.Stmts)), b.Stmts[:i]...)
		}
		if stmts != nil {
			stmts = append(stmts, n)
		}
	}
	if stmts == nil {
		return b
	}
	cp := *b
	cp.Stmts = stmts
	return &cp
}

func pruneStmt(s lang.Stmt, decide Decide) lang.Stmt {
	switch s := s.(type) {
	case *lang.Block:
		return pruneBlock(s, decide)
	case *lang.IfStmt:
		if v, ok := decide(s.Cond); ok {
			switch {
			case v:
				return pruneBlock(s.Then, decide)
			case s.Else == nil:
				return &lang.Block{At: s.At}
			}
			return pruneStmt(s.Else, decide)
		}
		then, els := pruneBlock(s.Then, decide), s.Else
		if els != nil {
			els = pruneStmt(els, decide)
		}
		if then == s.Then && els == s.Else {
			return s
		}
		cp := *s
		cp.Then, cp.Else = then, els
		return &cp
	case *lang.ForStmt:
		if body := pruneBlock(s.Body, decide); body != s.Body {
			cp := *s
			cp.Body = body
			return &cp
		}
	case *lang.WhileStmt:
		if body := pruneBlock(s.Body, decide); body != s.Body {
			cp := *s
			cp.Body = body
			return &cp
		}
	case *lang.UnrollStmt:
		if body := pruneBlock(s.Body, decide); body != s.Body {
			cp := *s
			cp.Body = body
			return &cp
		}
	}
	return s
}
