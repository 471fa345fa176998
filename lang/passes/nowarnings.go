package passes

import "github.com/skbtrace/skbtrace/lang"

// DropWarnf returns the script without its warnf() statements:
// --no-warnings silences them, as bpftrace's does (stdlib.md: warnf
// "respects the --no-warnings flag"). s is not changed; where it has no
// warnf, DropWarnf returns s.
func DropWarnf(s *lang.Script) *lang.Script {
	out, _ := eachProbe(s, func(p *lang.Probe) *lang.Probe {
		if !hasWarnf(p.Body) {
			return p
		}
		cp := *p
		cp.Body = lang.CloneBlock(p.Body)
		lang.Inspect(cp.Body, func(n lang.Node) bool {
			if b, ok := n.(*lang.Block); ok {
				kept := b.Stmts[:0]
				for _, st := range b.Stmts {
					if !isWarnf(st) {
						kept = append(kept, st)
					}
				}
				b.Stmts = kept
			}
			return true
		})
		return &cp
	})
	return out
}

func hasWarnf(b *lang.Block) bool {
	found := false
	lang.Inspect(b, func(n lang.Node) bool {
		if s, ok := n.(lang.Stmt); ok && isWarnf(s) {
			found = true
		}
		return !found
	})
	return found
}

func isWarnf(s lang.Stmt) bool {
	e, ok := s.(*lang.ExprStmt)
	if !ok {
		return false
	}
	c, ok := e.X.(*lang.CallExpr)
	return ok && c.Name == "warnf"
}
