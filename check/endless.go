package check

import "github.com/skbtrace/skbtrace/lang"

// endlessWhile reports a while loop the kernel's verifier cannot see end,
// at the loop, instead of the verifier's log: its condition reads nothing
// the body changes, and the body has no way out (break, return, exit()).
// Such a loop never ends once entered (while (1) { print(len) }); the
// verifier refuses it ("infinite loop detected"), and a loop that does
// change its condition is left to the verifier, which bounds it by
// walking it.
func (c *checker) endlessWhile(s *lang.WhileStmt) {
	if leaves(s.Body) {
		return
	}
	reads := map[string]bool{}
	lang.Inspect(s.Cond, func(n lang.Node) bool {
		switch n := n.(type) {
		case *lang.VarExpr:
			reads["$"+n.Name] = true
		case *lang.MapExpr:
			reads["@"+n.Name] = true
		case *lang.CallExpr:
			// A function's value (rand, a map lookup) may change by itself.
			reads["()"] = true
		case *lang.Ident:
			reads["?"] = true // a context value: the verifier decides
		}
		return true
	})
	if reads["()"] || reads["?"] {
		return
	}
	changed := false
	lang.Inspect(s.Body, func(n lang.Node) bool {
		var target lang.Expr
		switch n := n.(type) {
		case *lang.AssignStmt:
			target = n.Target
		case *lang.LetStmt:
			target = n.Var
		case *lang.ForStmt:
			target = n.Var
		case *lang.CallExpr:
			if (n.Name == "delete" || n.Name == "clear" || n.Name == "zero") && len(n.Args) > 0 {
				target = n.Args[0]
			}
		}
		switch t := target.(type) {
		case *lang.VarExpr:
			changed = changed || reads["$"+t.Name]
		case *lang.MapExpr:
			changed = changed || reads["@"+t.Name]
		}
		return !changed
	})
	if changed {
		return
	}
	c.errorf(s.Cond, "bound it: for ($i : 0..N) { ... } or unroll(N) { ... }; or change the condition in the body, or leave it with break: while (1) { ...; if (done) { break } }",
		"the kernel cannot prove this loop ends: nothing in its body changes its condition, and nothing leaves it")
}

// leaves reports whether a loop's body can leave the loop: a break that
// is its own (not an inner loop's), a return, or exit().
func leaves(body *lang.Block) bool {
	found := false
	var walk func(n lang.Node, inner bool)
	walk = func(n lang.Node, inner bool) {
		lang.Inspect(n, func(m lang.Node) bool {
			if found {
				return false
			}
			switch m := m.(type) {
			case *lang.JumpStmt:
				if m.Op == "return" || m.Op == "break" && !inner {
					found = true
				}
			case *lang.CallExpr:
				if m.Name == "exit" {
					found = true
				}
			case *lang.WhileStmt:
				walk(m.Body, true)
				return false
			case *lang.ForStmt:
				walk(m.Body, true)
				return false
			}
			return true
		})
	}
	walk(body, false)
	return found
}
