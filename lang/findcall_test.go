package lang

import "testing"

// TestFindCall checks find(@m, k, $v)'s tree: an if on has_key(@m[k])
// whose branch sets $v from the element.
func TestFindCall(t *testing.T) {
	s, err := Parse(&Source{Name: "t", Text: `begin { @m[1] = 2; if (find(@m, 1, $v)) { print($v) } }`})
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	Inspect(s, func(n Node) bool {
		if f, ok := n.(*IfStmt); ok {
			c, isCall := f.Cond.(*CallExpr)
			if isCall && c.Name == "has_key" && len(f.Then.Stmts) > 0 {
				a, ok := f.Then.Stmts[0].(*AssignStmt)
				v, isVar := a.Target.(*VarExpr)
				m, isMap := a.Value.(*MapExpr)
				found = ok && isVar && v.Name == "v" && isMap && m.Name == "m" && len(m.Keys) == 1
			}
		}
		return true
	})
	if !found {
		t.Error("no if (has_key(@m[1])) { $v = @m[1]; ... } in the tree")
	}
}
