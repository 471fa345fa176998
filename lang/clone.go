package lang

import "reflect"

// cloneExpr returns a deep copy of an expression: a node may stand in
// one place of a tree only (the checker records what it learns by node).
func cloneExpr(e Expr) Expr {
	if e == nil {
		return nil
	}
	return cloneNode(e).(Expr)
}

// cloneStmt returns a deep copy of a statement.
func cloneStmt(s Stmt) Stmt {
	return cloneNode(s).(Stmt)
}

// cloneNode deep-copies a node: every pointer to a struct below it is a
// new one; spans, strings and addresses are copied as values. A *Source
// is shared.
func cloneNode(n Node) Node {
	return cloneValue(reflect.ValueOf(n)).Interface().(Node)
}

var sourceType = reflect.TypeOf((*Source)(nil))

func cloneValue(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() || v.Type() == sourceType || v.Elem().Kind() != reflect.Struct {
			return v
		}
		cp := reflect.New(v.Elem().Type())
		cp.Elem().Set(cloneValue(v.Elem()))
		return cp
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		c := cloneValue(v.Elem())
		out := reflect.New(v.Type()).Elem()
		out.Set(c)
		return out
	case reflect.Struct:
		cp := reflect.New(v.Type()).Elem()
		cp.Set(v)
		for i := 0; i < v.NumField(); i++ {
			if cp.Field(i).CanSet() {
				cp.Field(i).Set(cloneValue(v.Field(i)))
			}
		}
		return cp
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		cp := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := 0; i < v.Len(); i++ {
			cp.Index(i).Set(cloneValue(v.Index(i)))
		}
		return cp
	}
	return v
}

// CloneBlock returns a deep copy of b, for passes that change a probe's
// body without changing the script they were given.
func CloneBlock(b *Block) *Block { return cloneStmt(b).(*Block) }
