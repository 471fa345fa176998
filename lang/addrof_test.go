package lang

import "testing"

// TestAddrOf checks that &$x parses as the unary & of the variable.
func TestAddrOf(t *testing.T) {
	s, err := Parse(&Source{Name: "t", Text: `begin { $x = 1; $p = &$x; }`})
	if err != nil {
		t.Fatal(err)
	}
	a := s.Probes[0].Body.Stmts[1].(*AssignStmt)
	u, ok := a.Value.(*UnaryExpr)
	if !ok || u.Op != "&" {
		t.Fatalf("$p's value is %T, want the unary &", a.Value)
	}
	if v, ok := u.X.(*VarExpr); !ok || v.Name != "x" {
		t.Errorf("& of %T, want $x", u.X)
	}
}
