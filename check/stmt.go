package check

import (
	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
	"github.com/skbtrace/skbtrace/stdlib"
)

func (c *checker) block(b *lang.Block) {
	for _, s := range b.Stmts {
		c.stmt(s)
	}
}

func (c *checker) stmt(s lang.Stmt) {
	switch s := s.(type) {
	case *lang.Block:
		c.block(s)
	case *lang.IfStmt:
		if v, ok := c.hasCond(c.probeNode, s.Cond); ok {
			// Only the branch taken is checked (Prune keeps it alone).
			switch {
			case v:
				c.block(s.Then)
			case s.Else != nil:
				c.stmt(s.Else)
			}
			return
		}
		c.wantCond(s.Cond, c.expr(s.Cond), "an if condition")
		// fail() in a branch a constant condition leaves out is not reached.
		v, known := c.constBool(s.Cond)
		c.deadIf(known && !v, func() { c.block(s.Then) })
		if s.Else != nil {
			c.deadIf(known && v, func() { c.stmt(s.Else) })
		}
	case *lang.ExprStmt:
		call, ok := s.X.(*lang.CallExpr)
		if lang.EmptyTuple(s.X) {
			// (): bpftrace's value of nothing, as a statement.
			c.expr(s.X)
			return
		}
		if !ok {
			c.expr(s.X)
			hint := "did you mean print(" + c.text(s.X) + ")?"
			if _, isMap := s.X.(*lang.MapExpr); isMap {
				hint = "assign to it: " + c.text(s.X) + " = count()"
			}
			c.errorf(s.X, hint, "this expression does nothing")
			return
		}
		t := c.call(call, true, false)
		if len(c.loops) > 0 {
			c.callbackUse(call)
		}
		if f := c.info.Calls[call]; f != nil && !f.Stmt && f.Agg == 0 && t.Kind != types.Invalid && !stdlib.ValueOptional[f.Name] {
			c.errorf(call, "use it in print(), printf() or a map", "the value of %s() is not used", call.Name)
		}
		c.info.Types[call] = t
	case *lang.AssignStmt:
		c.assign(s)
	case *lang.LetStmt:
		c.let(s)
	case *lang.ForStmt:
		c.forStmt(s)
	case *lang.WhileStmt:
		c.whileStmt(s)
	case *lang.UnrollStmt:
		c.unroll(s)
	case *lang.JumpStmt:
		c.jump(s)
	}
}

func (c *checker) assign(s *lang.AssignStmt) {
	value := func() types.Type {
		if call, ok := s.Value.(*lang.CallExpr); ok {
			_, isMap := s.Target.(*lang.MapExpr)
			t := c.call(call, false, isMap && s.Op == "=")
			c.info.Types[call] = t
			if len(c.loops) > 0 {
				c.callbackUse(call)
			}
			return t
		}
		return c.expr(s.Value)
	}
	switch t := s.Target.(type) {
	case *lang.VarExpr:
		if c.inLoopVar(t.Name) {
			c.errorf(t, "the loop sets it each turn; copy it to change it: $y = $"+t.Name, "$%s is a for loop's variable, which the loop sets", t.Name)
			value()
			return
		}
		v := value()
		if v.Kind == types.Invalid {
			// The value's error is reported: the variable's later uses
			// are not errors of their own ("used before it is assigned").
			if _, exists := c.vars[t.Name]; !exists && s.Op == "=" {
				c.vars[t.Name] = types.Bad
			}
			return
		}
		if !storable(v) {
			c.errorf(s.Value, valueHint(s.Value, v), "a variable cannot hold %s", v)
			return
		}
		v = storedStruct(v)
		old, exists := c.vars[t.Name]
		if exists && old.Kind == types.Invalid {
			return
		}
		if s.Op != "=" {
			if !exists {
				c.errorf(t, "assign it first: $"+t.Name+" = 0", "$%s is used before it is assigned", t.Name)
				return
			}
			if !old.IsInt() || !v.IsInt() {
				c.errorf(s, "", "%s needs integers, got %s and %s", s.Op, old, v)
			}
			if s.Op == "<<=" || s.Op == ">>=" {
				c.shiftCount(s.Value)
			}
			c.info.Types[t] = old
			return
		}
		if exists && !sameKind(old, v) {
			c.errorf(s.Value, "", "$%s holds %s; it cannot also hold %s", t.Name, old, v)
			return
		}
		if exists && c.declared[t.Name] == declFixed {
			// A declared type stays; the value is truncated to it.
			v = old
		} else if exists {
			v = widen(old, v)
		}
		c.vars[t.Name] = v
		c.info.Types[t] = v
	case *lang.MapExpr:
		keys := make([]types.Type, len(t.Keys))
		for i, k := range t.Keys {
			keys[i] = c.expr(k)
			if keys[i].Kind != types.Invalid && !keyable(keys[i]) {
				c.errorf(k, "", "a map key cannot be %s", keys[i])
				keys[i] = types.Bad
			}
		}
		if c.info.SpreadKey(t) {
			keys = append([]types.Type(nil), keys[0].Tuple.Elems...)
		}
		v := value()
		if v.Kind == types.Invalid {
			return
		}
		if s.Op != "=" && !v.IsInt() {
			c.errorf(s.Value, "", "%s needs an integer, got %s", s.Op, v)
			return
		}
		if s.Op == "<<=" || s.Op == ">>=" {
			c.shiftCount(s.Value)
		}
		if v.Kind != types.Agg && !storable(v) {
			c.errorf(s.Value, valueHint(s.Value, v), "a map cannot hold %s", v)
			return
		}
		if v.IsInt() {
			// Widened to a u64 slot; Layout keeps strftime()'s format.
			v = types.Type{Kind: types.Int, Size: 8, Signed: v.Signed, Fmt: v.Fmt, BTF: v.BTF, User: v.User, Layout: v.Layout}
		}
		v = storedStruct(v)
		c.mapAssign(t, keys, v)
		c.info.Types[t] = v
		if v.Kind == types.Agg && v.Agg == types.AggTseries {
			c.tseriesBounds(t, s.Value.(*lang.CallExpr))
		}
	}
}

// storable reports whether a variable or map value can hold t.
func storable(t types.Type) bool {
	switch t.Kind {
	case types.Int, types.String, types.Addr, types.Ptr, types.Stack, types.Endpoint, types.Tuple:
		return true
	case types.Array:
		// bpftrace's array casts, (int8[8])x, in a variable.
		return t.Size <= 64
	case types.Struct:
		return structValue(t)
	}
	return false
}

func keyable(t types.Type) bool {
	return storable(t) && (t.Kind != types.Array || intArray(t)) && t.Kind != types.Struct
}

func sameKind(a, b types.Type) bool {
	if a.Kind != b.Kind {
		return false
	}
	if a.Kind == types.Agg {
		return a.Agg == b.Agg
	}
	if a.Kind == types.Tuple {
		return sameTuple(a, b)
	}
	if a.Kind == types.Struct {
		return a.Size == b.Size && types.CName(a.BTF) == types.CName(b.BTF)
	}
	return true
}

// widen returns the type that holds both a and b (same kind).
func widen(a, b types.Type) types.Type {
	switch a.Kind {
	case types.Int:
		r := a
		r.Size = max(a.Size, b.Size)
		r.Signed = a.Signed && b.Signed
		return r
	case types.String:
		return types.Str(max(a.Size, b.Size))
	case types.Tuple:
		return widenTuple(a, b)
	}
	return a
}
