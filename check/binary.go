package check

import (
	"fmt"
	"strings"

	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
	"github.com/skbtrace/skbtrace/stdlib"
)

func (c *checker) binary(e *lang.BinaryExpr) types.Type {
	x, y := c.expr(e.X), c.expr(e.Y)
	if x.Kind == types.Invalid || y.Kind == types.Invalid {
		return types.Bad
	}
	if (x.Fmt == types.FmtProbe || y.Fmt == types.FmtProbe) && e.Op != "==" && e.Op != "!=" {
		c.errorf(lang.Node(nameNode{e.OpSpan}), "print probe, or key a map by it: @[probe] = count()", "probe is a name, not a number: operator %s does not apply", e.Op)
		return types.Bad
	}
	switch e.Op {
	case "&&", "||":
		c.wantCond(e.X, x, "an operand of "+e.Op)
		c.wantCond(e.Y, y, "an operand of "+e.Op)
		return types.Bool
	case "in":
		if x.Kind != types.Addr {
			c.errorf(e.X, "", "the left of in must be an address, got %s", x)
		}
		if y.Kind != types.CIDR {
			c.errorf(e.Y, "e.g. saddr in 10.0.0.0/8", "the right of in must be an address prefix")
		}
		return types.Bool
	case "==", "!=":
		return c.equality(e, x, y)
	case "<", "<=", ">", ">=":
		if (x.IsInt() && y.IsInt()) || (x.Kind == types.Ptr && y.Kind == types.Ptr) {
			return types.Bool
		}
		if !c.nonNumberParam(e.X, e.Y) {
			c.errorf(lang.Node(nameNode{e.OpSpan}), "", "cannot order %s and %s with %s", x, y, e.Op)
		}
		return types.Bad
	}
	// Pointer arithmetic, as C's: p + n and p - n are n elements on.
	if t, ok := ptrArith(e.Op, x, y); ok {
		return t
	}
	// Arithmetic and bitwise operators.
	if !x.IsInt() || !y.IsInt() {
		if t, ok := c.paramSuffix(e, x); ok {
			return t
		}
		if c.nonNumberParam(e.X, e.Y) {
			return types.Bad
		}
		hint := ""
		if x.Kind == types.Ptr || y.Kind == types.Ptr {
			hint = "a pointer takes + and - of an integer; read members with ->"
		}
		c.errorf(lang.Node(nameNode{e.OpSpan}), hint, "operator %s needs integers, got %s and %s", e.Op, x, y)
		return types.Bad
	}
	if e.Op == "/" || e.Op == "%" {
		if v, ok := c.constInt(e.Y); ok && v == 0 {
			c.errorf(e.Y, "", "division by zero")
		}
	}
	if e.Op == "<<" || e.Op == ">>" {
		c.shiftCount(e.Y)
	}
	// Arithmetic is 64-bit, signed as types.SignedOp says.
	t := types.Type{Kind: types.Int, Size: 8, Signed: types.SignedOp(x, y)}
	if e.Op == "&" || e.Op == "|" || e.Op == "^" {
		t.Fmt = sameFmt(x, y)
	}
	return t
}

// equality checks == and !=. It also resolves the forgiving comparisons:
// `proto == tcp` tests the L4 protocol, and an enum compared with a string
// compares with the enumerator of that name (`reason == "NO_SOCKET"`).
func (c *checker) equality(e *lang.BinaryExpr, x, y types.Type) types.Type {
	if (x.IsInt() && x.Fmt.Named()) || (y.IsInt() && y.Fmt.Named()) {
		c.errorf(lang.Node(nameNode{e.OpSpan}), "choose pods with --pod NAMESPACE/NAME, --namespace NS or --container NAME: they let only those pods' packets through",
			"pod, podns and container are names user space finds after the event, and are not compared in the kernel")
		return types.Bad
	}
	// A parameter compared with a string is its text: `$1 == "-c"` is
	// false, not an error, when $1 is missing or a number.
	if x.IsInt() && y.Kind == types.String {
		x = c.paramAsString(e.X, x)
	} else if y.IsInt() && x.Kind == types.String {
		y = c.paramAsString(e.Y, y)
	}
	if x.Fmt == types.FmtProbe || y.Fmt == types.FmtProbe {
		other := e.Y
		if y.Fmt == types.FmtProbe {
			other = e.X
		}
		if k, ok := c.info.Consts[other]; ok && k.IsStr && (x.Fmt != types.FmtProbe || y.Fmt != types.FmtProbe) {
			c.info.ProbeNames[e] = k.Str
			return types.Bool
		}
		c.errorf(lang.Node(nameNode{e.OpSpan}), `compare probe with a string literal: probe == "tracepoint:skb:kfree_skb"`,
			"probe is compared only with a constant string")
		return types.Bad
	}
	xb, yb := x.Kind == types.String && x.Fmt == types.FmtBuf, y.Kind == types.String && y.Fmt == types.FmtBuf
	if xb && yb && (e.Op == "==" || e.Op == "!=") {
		// Two buf()s: equal where their lengths and bytes are, as
		// bpftrace compares buffers.
		return types.Bool
	}
	if xb || yb {
		c.errorf(lang.Node(nameNode{e.OpSpan}), "compare text with str(pointer, length), or the first bytes with strncmp",
			"buf() is compared only with another buf(), by == and !=")
		return types.Bad
	}
	if name, ok := c.funcName(x, e.Y, y); ok {
		c.info.FuncNames[e] = name
		return types.Bool
	}
	if name, ok := c.funcName(y, e.X, x); ok {
		c.info.FuncNames[e] = name
		return types.Bool
	}
	switch {
	case x.IsInt() && y.IsInt():
		c.protoLayer(e.X, x, e.Y, y)
		c.protoLayer(e.Y, y, e.X, x)
		return types.Bool
	case x.IsInt() && x.Fmt == types.FmtEnum && y.Kind == types.String:
		c.enumName(e.Y, x)
		return types.Bool
	case y.IsInt() && y.Fmt == types.FmtEnum && x.Kind == types.String:
		c.enumName(e.X, y)
		return types.Bool
	case x.Kind == types.String && y.Kind == types.String:
		return types.Bool
	case x.Kind == types.Addr && y.Kind == types.Addr:
		return types.Bool
	case x.Kind == types.Tuple && y.Kind == types.Tuple && sameTuple(x, y):
		// Element by element, as bpftrace compares tuples.
		return types.Bool
	case x.Kind == types.Ptr && (y.Kind == types.Ptr || y.IsInt()), y.Kind == types.Ptr && x.IsInt():
		return types.Bool
	case x.Kind == types.Addr && y.Kind == types.CIDR, y.Kind == types.Addr && x.Kind == types.CIDR:
		c.errorf(lang.Node(nameNode{e.OpSpan}), "test a prefix with in: saddr in 10.0.0.0/8", "cannot compare an address with a prefix using %s", e.Op)
		return types.Bad
	}
	if !c.nonNumberParam(e.X, e.Y) {
		c.errorf(lang.Node(nameNode{e.OpSpan}), "", "cannot compare %s with %s", x, y)
	}
	return types.Bad
}

// nonNumberParam reports, naming it, a positional parameter given as text
// where a number is wanted: `mark == $1` run with `eth0`.
func (c *checker) nonNumberParam(sides ...lang.Expr) bool {
	for _, e := range sides {
		p, ok := lang.Unparen(e).(*lang.PosParam)
		if !ok {
			continue
		}
		if k, ok := c.info.Consts[p]; ok && k.IsStr {
			c.errorf(e, "pass a number there (decimal or 0x hex), or compare it with a string: $1 == \"eth0\"", "$%d is %q, not a number", p.N, k.Str)
			return true
		}
	}
	return false
}

// protoLayer rewrites `proto == tcp` to test l4proto: proto is the L3
// protocol, and a user comparing it with an L4 name means the L4 protocol.
func (c *checker) protoLayer(field lang.Expr, ft types.Type, other lang.Expr, ot types.Type) {
	id, ok := lang.Unparen(field).(*lang.Ident)
	if !ok || ot.Layer == 0 {
		return
	}
	f := c.info.Fields[id]
	switch {
	case f != nil && f.Name == "proto" && ot.Layer == 4:
		l4 := stdlib.LookupField("l4proto")
		c.info.Fields[id] = l4
		c.info.Types[id] = l4.Type
	case f != nil && f.Name == "l4proto" && ot.Layer == 3:
		c.errorf(other, "write proto == "+c.text(other), "%s is an L3 protocol; l4proto holds L4 protocols", c.text(other))
	}
}

// enumName resolves a string compared with an enum to the enumerator's value;
// the enum's common prefix may be left out: "NO_SOCKET" for SKB_DROP_REASON_NO_SOCKET.
func (c *checker) enumName(s lang.Expr, et types.Type) {
	k, ok := c.info.Consts[lang.Unparen(s)]
	en, isEnum := et.BTF.(*btf.Enum)
	if !ok || !k.IsStr || !isEnum {
		c.errorf(s, "compare with a string literal such as \"NO_SOCKET\"", "an enum compares only with a constant name")
		return
	}
	prefix := types.EnumPrefix(en)
	var names []string
	for _, v := range en.Values {
		short := strings.TrimPrefix(v.Name, prefix)
		if v.Name == k.Str || short == k.Str {
			c.info.Consts[s] = Const{Int: v.Value}
			c.info.Types[s] = et
			return
		}
		names = append(names, short)
	}
	c.errorf(s, didYouMean(k.Str, names), "%q is not a value of enum %s", k.Str, en.Name)
}

// paramSuffix resolves bpftrace's `str($2 + 1)`: a positional parameter
// given as text is a pointer to it, and adding a constant no larger than its
// length skips that many bytes.
func (c *checker) paramSuffix(e *lang.BinaryExpr, x types.Type) (types.Type, bool) {
	p, ok := lang.Unparen(e.X).(*lang.PosParam)
	if !ok || e.Op != "+" || x.Kind != types.String {
		return types.Bad, false
	}
	k := c.info.Consts[p]
	if !k.IsStr {
		return types.Bad, false
	}
	n, ok := c.constInt(e.Y)
	if !ok || n < 0 || n > int64(len(k.Str)) {
		c.errorf(e.Y, fmt.Sprintf("add a constant from 0 to %d, the length of %q", len(k.Str), k.Str), "only a constant no larger than its length can be added to $%d", p.N)
		return types.Bad, true
	}
	v := k.Str[n:]
	c.info.Consts[e] = Const{Str: v, IsStr: true}
	return types.Str(max(len(v)+1, 16)), true
}

// paramAsString retypes a positional parameter as a string constant.
func (c *checker) paramAsString(e lang.Expr, t types.Type) types.Type {
	if b, ok := lang.Unparen(e).(*lang.BinaryExpr); ok && t.Kind == types.Int {
		// str($1 + 1) of a numeric argument: its text from there, as of
		// a text argument.
		if p, ok := lang.Unparen(b.X).(*lang.PosParam); ok && !p.Count && b.Op == "+" {
			x := c.paramAsString(p, t)
			if st, ok := c.paramSuffix(b, x); ok {
				c.info.Types[b] = st
				if e != lang.Expr(b) {
					c.info.Types[e] = st
				}
				return st
			}
		}
		return t
	}
	p, ok := lang.Unparen(e).(*lang.PosParam)
	if !ok || p.Count {
		return t
	}
	v, _ := c.param(p.N)
	if c.asString == nil {
		c.asString = map[*lang.PosParam]bool{}
	}
	c.asString[p] = true
	c.info.Consts[p] = Const{Str: v, IsStr: true}
	st := types.Str(max(len(v)+1, 16))
	c.info.Types[p] = st
	if e != lang.Expr(p) {
		c.info.Types[e] = st
	}
	return st
}

// funcName reports the function name of `func == "kfree_skb"`: a kernel
// address (func, ksym()) compared with a constant string.
func (c *checker) funcName(addr types.Type, other lang.Expr, ot types.Type) (string, bool) {
	if !addr.IsInt() || addr.Fmt != types.FmtKsym || ot.Kind != types.String {
		return "", false
	}
	k, ok := c.info.Consts[other]
	if !ok || !k.IsStr {
		c.errorf(other, "compare func with a string literal: func == \"kfree_skb\"", "func is compared by name only with a constant string")
		return "", false
	}
	return k.Str, true
}

// shiftCount rejects a constant shift count outside 0..63: the kernel's
// shifts take the count modulo the width, so 64 would silently be
// another shift.
func (c *checker) shiftCount(e lang.Expr) {
	if v, ok := c.constInt(e); ok && (v < 0 || v >= 64) {
		c.errorf(e, "arithmetic is 64-bit: shift by 0 to 63", "shift by %d is out of range", v)
	}
}

// ptrArith types p + n, n + p and p - n: the pointer's type.
func ptrArith(op string, x, y types.Type) (types.Type, bool) {
	switch {
	case (op == "+" || op == "-") && x.Kind == types.Ptr && y.IsInt():
		return x, true
	case op == "+" && y.Kind == types.Ptr && x.IsInt():
		return y, true
	}
	return types.Type{}, false
}
