package check

import (
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
	"github.com/skbtrace/skbtrace/stdlib"
)

// expr checks an expression and records its type.
func (c *checker) expr(e lang.Expr) types.Type {
	t := c.expr1(e)
	c.info.Types[e] = t
	if len(c.loops) > 0 {
		c.callbackUse(e)
	}
	return t
}

func (c *checker) expr1(e lang.Expr) types.Type {
	switch e := e.(type) {
	case *lang.IntLit:
		c.info.Consts[e] = Const{Int: e.Value}
		if e.Value > math.MaxInt64 {
			return types.U64
		}
		return types.S64
	case *lang.StrLit:
		c.info.Consts[e] = Const{Str: e.Value, IsStr: true}
		return types.Str(len(e.Value) + 1)
	case *lang.IPLit:
		return types.IP
	case *lang.CIDRLit:
		return types.Type{Kind: types.CIDR}
	case *lang.PosParam:
		return c.posParam(e)
	case *lang.Ident:
		return c.ident(e)
	case *lang.VarExpr:
		t, ok := c.vars[e.Name]
		if !ok && c.declared[e.Name] == declPending {
			c.errorf(e, "assign it first, or declare it with a value or a type: let $"+e.Name+" = 0, let $"+e.Name+": int64",
				"$%s is declared without a value and read before it is assigned", e.Name)
			return types.Bad
		}
		if !ok {
			hint := ""
			if m := lang.Suggest(e.Name, slices.Sorted(maps.Keys(c.vars))); m != "" {
				hint = "did you mean $" + m + "?"
			}
			c.errorf(e, hint, "$%s is used before it is assigned", e.Name)
			return types.Bad
		}
		return t
	case *lang.MapExpr:
		return c.mapRead(e)
	case *lang.CallExpr:
		return c.call(e, false, false)
	case *lang.FieldExpr:
		return c.field(e)
	case *lang.IndexExpr:
		return c.index(e)
	case *lang.UnaryExpr:
		return c.unary(e)
	case *lang.BinaryExpr:
		return c.binary(e)
	case *lang.CondExpr:
		return c.cond(e)
	case *lang.CastExpr:
		return c.cast(e)
	case *lang.TypeOfExpr:
		return c.typeOf(e)
	case *lang.TupleExpr:
		return c.tuple(e)
	case *lang.ParenExpr:
		t := c.expr(e.X)
		if k, ok := c.info.Consts[e.X]; ok {
			c.info.Consts[e] = k
		}
		return t
	}
	c.errorf(e, "", "unsupported expression")
	return types.Bad
}

func (c *checker) ident(e *lang.Ident) types.Type {
	if e.Name == "args" {
		// args alone: the arguments as one struct (print(args)).
		return c.argsStruct(e)
	}
	if n, ok := argIndex(e.Name); ok {
		return c.rawArg(e, n)
	}
	if f := c.xdpField(e.Name); f != nil {
		return c.useField(e, f)
	}
	if e.Name == "probetype" {
		return c.probeType(e)
	}
	if f := stdlib.LookupField(e.Name); f != nil {
		return c.useField(e, f)
	}
	if t, ok := c.scriptEnumerator(e); ok {
		return t
	}
	if k := stdlib.LookupConst(e.Name); k != nil {
		c.info.Consts[e] = Const{Int: k.Value}
		return k.Type
	}
	if v, ok := c.enumerator(e.Name); ok {
		// A kernel enumerator, as C names it: TCP_CLOSE,
		// SKB_DROP_REASON_NOT_SPECIFIED.
		c.info.Consts[e] = Const{Int: v.value}
		return types.Type{Kind: types.Int, Size: int(v.enum.Size), Signed: v.enum.Signed, Fmt: types.FmtEnum, BTF: v.enum}
	}
	for i, p := range c.ctx.Params {
		// A probe's argument may be named bare, as SPEC.md's
		// `ksym(location)` on tracepoint:skb:kfree_skb does.
		if p.Name == e.Name {
			c.info.ArgRefs[e] = i
			return p.Type
		}
	}
	if c.ctx.Unresolved {
		return types.Bad
	}
	if why, ok := unsupportedBuiltins[e.Name]; ok {
		c.errorf(e, why, "bpftrace's %s is not supported", e.Name)
		return types.Bad
	}
	if c.ctx.Skb {
		// Where an skb is known, a bare name may be any member of struct
		// sk_buff, as in ipftrace2: `truesize`, `data_len`, `queue_mapping`.
		if _, _, ok := FindMember(c.info.SkbType, e.Name); ok {
			f := c.memberFields[e.Name]
			if f == nil {
				f = &stdlib.Field{Name: e.Name, Doc: "skb->" + e.Name, Needs: stdlib.NeedSkb, Src: stdlib.Source{Kind: stdlib.SrcSkbPath, Path: []string{e.Name}}}
				c.memberFields[e.Name] = f
			}
			return c.useField(e, f)
		}
		cands := append(stdlib.Names(), memberNames(c.info.SkbType)...)
		c.errorf(e, didYouMean(e.Name, cands), "unknown field %q of struct sk_buff", e.Name)
		return types.Bad
	}
	c.errorf(e, didYouMean(e.Name, stdlib.Names()), "unknown name %q", e.Name)
	return types.Bad
}

// enumerator finds a kernel enumerator written as C names it (TCP_CLOSE):
// only an upper-case name is looked for, so that other names do not cost
// the walk over all of BTF that the index of enumerators takes.
func (c *checker) enumerator(name string) (enumerator, bool) {
	if !isUpperName(name) {
		return enumerator{}, false
	}
	if v, ok := indexOf(c.opts.BTF).enumerators[name]; ok {
		return v, true
	}
	if en, standIn := c.dropReasonEnum(); standIn {
		// SKB_DROP_REASON_NETFILTER_DROP compiles where reason does.
		for _, v := range en.Values {
			if v.Name == name {
				return enumerator{v.Value, en}, true
			}
		}
	}
	return enumerator{}, false
}

func didYouMean(name string, cands []string) string {
	if m := lang.Suggest(name, cands); m != "" {
		return "did you mean " + m + "?"
	}
	return ""
}

// argIndex parses arg0..argN.
func argIndex(name string) (int, bool) {
	if !strings.HasPrefix(name, "arg") || len(name) < 4 {
		return 0, false
	}
	n, err := strconv.Atoi(name[3:])
	return n, err == nil && n >= 0 && n < 12
}

func (c *checker) rawArg(e *lang.Ident, n int) types.Type {
	if c.ctx.Params != nil {
		for i, p := range c.ctx.Params {
			if p.Index == n {
				c.info.ArgRefs[e] = i
				return p.Type
			}
		}
		if why := c.argMismatch("", n); why != "" {
			c.errorf(e, globHint, "%s cannot be read here: %s", e.Name, why)
			return types.Bad
		}
		c.errorf(e, "", "%s: this function has %d arguments", e.Name, len(c.ctx.Params))
		return types.Bad
	}
	if !c.ctx.Func {
		c.ctxErrorf(e, c.ctx.NoArgs, "no %s in this probe", e.Name)
		return types.Bad
	}
	if n > 5 {
		c.errorf(e, "", "%s: only arg0..arg5 are readable from registers", e.Name)
		return types.Bad
	}
	if c.userArg(e) {
		return types.Bad
	}
	c.info.ArgRefs[e] = -1 - n
	return types.U64
}

// useField checks that the probe provides what a builtin needs.
func (c *checker) useField(e *lang.Ident, f *stdlib.Field) types.Type {
	const where = "skb fields are known in skb:, in kprobe/fentry on a function taking a struct sk_buff *, and in tracepoints that carry one"
	switch {
	case f.Needs&stdlib.NeedSkb != 0 && !c.ctx.Skb:
		hint := where
		if h := c.xdpLacksSkb(e.Name); h != "" {
			hint = h
		}
		if why := c.globLacks("a struct sk_buff *", func(f *SpecInfo) bool { return f.SkbParam >= 0 }); why != "" {
			hint = why
		}
		c.ctxErrorf(e, hint, "%s needs an skb, and this probe has none", e.Name)
		return types.Bad
	case f.Needs&stdlib.NeedRetval != 0 && c.ctx.RetvalDiffers != nil:
		if !c.retvalReported[c.ctx] {
			c.retvalReported[c.ctx] = true
			c.errorf(c.ctx.RetvalDiffers, "split the probe list so that the functions of each probe return one type",
				"retval has no one type in this probe list: %s", c.ctx.RetvalWhy)
		}
		return types.Bad
	case f.Needs&stdlib.NeedRetval != 0 && c.ctx.Retval.Kind == types.Invalid:
		c.ctxErrorf(e, "retval is known in kretprobe, uretprobe, fexit and skbret probes", "no return value in this probe")
		return types.Bad
	case f.Needs&stdlib.NeedRetval != 0 && c.ctx.Retval.Kind == types.Void:
		c.ctxErrorf(e, "the functions this probe matches return nothing (void); match others, or use duration", "no return value in this probe")
		return types.Bad
	case f.Needs&stdlib.NeedEntry != 0 && !c.ctx.Entry:
		c.ctxErrorf(e, "duration is the time from a function's entry to its return: use it in skbret:GLOB, the return side of skb:GLOB", "no function entry in this probe")
		return types.Bad
	case f.Needs&stdlib.NeedReason != 0 && !c.ctx.Reason:
		c.ctxErrorf(e, c.reasonHint(), "no drop reason in this probe")
		return types.Bad
	case f.Needs&stdlib.NeedProg != 0 && !c.ctx.Prog:
		c.ctxErrorf(e, e.Name+" is the traced BPF program, in bpf:TYPE:NAME and bpfret:TYPE:NAME probes", "no BPF program traced in this probe")
		return types.Bad
	case f.Needs&stdlib.NeedFunc != 0 && !c.ctx.Func:
		c.ctxErrorf(e, "func is the traced function in skb:, kprobe and fentry probes", "no traced function in this probe")
		return types.Bad
	}
	if f.Src.Kind == stdlib.SrcNetfilter && c.info.Netfilter == nil {
		l, err := netfilterLayout(c.opts.BTF)
		if err != nil {
			c.errorf(e, err.Error(), "%s is not available on this kernel", e.Name)
			return types.Bad
		}
		c.info.Netfilter = l
	}
	c.info.Fields[e] = f
	t := f.Type
	switch f.Name {
	case "kstack":
		t.Layout = c.info.Config.StackMode
	case "skb":
		t.BTF = c.info.SkbType
	case "ctx":
		if c.ctx != nil {
			for _, si := range c.ctx.Specs {
				if si.Spec.Kind == lang.ProbeTracepoint && !si.Spec.Raw {
					// bpftrace's error: a tracepoint's record is args.
					c.errorf(e, "read the tracepoint's fields with args.NAME", "Use args instead of ctx in tracepoint")
					return types.Bad
				}
			}
		}
	case "curtask":
		var task *btf.Struct
		if st, ok := c.scriptTagged("struct task_struct"); ok {
			// The script's own struct task_struct shadows the kernel's,
			// as in bpftrace.
			t.BTF = st
		} else if err := c.opts.BTF.TypeByName("task_struct", &task); err == nil {
			t.BTF = task
		}
	case "retval":
		t = c.ctx.Retval
	case "func":
		t = c.userFuncType(e, t)
	case "reason":
		en, standIn := c.dropReasonEnum()
		t.BTF = en
		if standIn {
			c.reasonConst(e)
		}
	}
	if f.Src.Kind == stdlib.SrcSkbPath && len(f.Src.Path) == 0 && f.Src.Base != stdlib.BaseSkb {
		// A pointer to the base itself: ct.
		st, ok := c.baseStruct(e, f)
		if !ok {
			return types.Bad
		}
		t.BTF = st
	}
	if f.Src.Kind == stdlib.SrcSkbPath && len(f.Src.Path) > 0 {
		path, ok := c.skbPath(e, f)
		if !ok {
			return types.Bad
		}
		if f.Type.Kind == types.Invalid || f.Type.Kind == 0 {
			// A bare sk_buff member takes its type from BTF.
			t = path[len(path)-1].Type
		}
	}
	return t
}

// skbPath resolves a stdlib field's member chain against this kernel's BTF.
func (c *checker) skbPath(e lang.Node, f *stdlib.Field) ([]Member, bool) {
	if p, ok := c.info.SkbPaths[f]; ok {
		return p, true
	}
	cur, ok := c.baseStruct(e, f)
	if !ok {
		return nil, false
	}
	var path []Member
	deref := true
	for _, name := range f.Src.Path {
		m, ok := c.resolveMember(cur, name, deref)
		if !ok {
			c.errorf(e, "this kernel's "+types.CName(cur)+" has no member "+name, "%s is not available on this kernel", f.Name)
			return nil, false
		}
		path = append(path, m)
		switch m.Type.Kind {
		case types.Ptr:
			cur, deref = m.Type.BTF, true
		case types.Struct:
			cur, deref = m.Type.BTF, false
		}
	}
	c.info.SkbPaths[f] = path
	return path, true
}

// baseStruct is the BTF struct a field's member chain starts from.
func (c *checker) baseStruct(e lang.Node, f *stdlib.Field) (btf.Type, bool) {
	if f.Src.Base == stdlib.BaseSkb {
		return c.info.SkbType, true
	}
	var st *btf.Struct
	if err := c.opts.BTF.TypeByName(f.Src.Base.BaseStruct(), &st); err != nil {
		c.errorf(e, "this kernel's BTF has no struct "+f.Src.Base.BaseStruct(), "%s is not available on this kernel", f.Name)
		return nil, false
	}
	return st, true
}

func (c *checker) field(e *lang.FieldExpr) types.Type {
	if id, ok := e.X.(*lang.Ident); ok && id.Name == "args" && c.ctx.Record != nil {
		// A classic tracepoint: args points to its record.
		c.info.Types[id] = types.Type{Kind: types.Ptr, Size: 8, BTF: c.ctx.Record}
		if loc, ok := c.ctx.DataLocs[e.Name]; ok {
			if !c.recordDataLoc(e, loc) {
				return types.Bad
			}
			c.info.DataLocs[e] = loc
			return types.Str(loc.Size)
		}
		m, ok := c.recordField(e)
		if !ok {
			return types.Bad
		}
		c.info.Members[e] = m
		return m.Type
	}
	if id, ok := e.X.(*lang.Ident); ok && id.Name == "args" {
		c.info.Types[id] = types.Type{Kind: types.Args}
		if c.ctx.Params == nil {
			c.ctxErrorf(id, c.ctx.NoArgs, "no args in this probe")
			return types.Bad
		}
		var names []string
		for i, p := range c.ctx.Params {
			if p.Name == e.Name {
				c.info.ArgRefs[e] = i
				return p.Type
			}
			names = append(names, p.Name)
		}
		hint := "the arguments are " + strings.Join(names, ", ")
		if m := lang.Suggest(e.Name, names); m != "" {
			hint = "did you mean args." + m + "?"
		}
		if c.isFormatField(e.Name) {
			hint = e.Name + " is a format field of this tracepoint, read as bpftrace reads it; skb fields, argN and bare argument names need the raw arguments, so a probe reads one or the other"
		}
		if why := c.argMismatch(e.Name, -1); why != "" {
			c.errorf(e, globHint, "args.%s cannot be read here: %s", e.Name, why)
			return types.Bad
		}
		c.errorf(e, hint, "no argument %q in this probe", e.Name)
		return types.Bad
	}
	x := c.expr(e.X)
	if x.Kind == types.Tuple {
		return c.tupleElem(e, x)
	}
	if _, ok := lang.TupleIndex(e); ok && x.Kind != types.Invalid {
		c.notTuple(e, x)
		return types.Bad
	}
	var structType btf.Type
	switch x.Kind {
	case types.Invalid:
		return types.Bad
	case types.Ptr:
		// `.` on a pointer reads through it, as bpftrace 0.2x does:
		// $sk.__sk_common.skc_family is $sk->__sk_common.skc_family.
		structType = x.BTF
	case types.Struct:
		// -> is an alias of . (bpftrace 0.25): on a struct value too.
		structType = x.BTF
	default:
		c.errorf(e, "", "%s is %s, which has no fields", c.text(e.X), x)
		return types.Bad
	}
	switch btf.UnderlyingType(structType).(type) {
	case *btf.Struct, *btf.Union:
	default:
		c.errorf(e, "", "%s points to %s, which has no fields", c.text(e.X), types.CName(structType))
		return types.Bad
	}
	m, ok := c.resolveMember(structType, e.Name, x.Kind == types.Ptr)
	if !ok {
		hint := renamedHint(structType, e.Name)
		if hint == "" {
			hint = didYouMean(e.Name, memberNames(structType))
		}
		c.errorf(lang.Node(nameNode{e.NameSpan}), hint, "unknown field %q of %s", e.Name, types.CName(btf.UnderlyingType(structType)))
		return types.Bad
	}
	if m.Type.Kind == types.Invalid {
		c.errorf(e, "", "field %s has type %s, which a script cannot read", e.Name, types.CName(m.BTF))
		return types.Bad
	}
	m.Type.User = x.User && m.Type.Kind != types.Int
	c.info.Members[e] = m
	return m.Type
}

// nameNode is a node made of a span, for errors about a name inside a node.
type nameNode struct{ sp lang.Span }

func (n nameNode) Span() lang.Span { return n.sp }

func (c *checker) index(e *lang.IndexExpr) types.Type {
	x := c.expr(e.X)
	i := c.expr(e.Index)
	if i.Kind != types.Invalid && !i.IsInt() {
		c.errorf(e.Index, "", "an index must be an integer, got %s", i)
	}
	switch x.Kind {
	case types.Invalid:
		return types.Bad
	case types.String:
		if k, ok := c.info.Consts[e.X]; ok && k.IsStr {
			// "/"[0], as opensnoop.bt compares a path's first byte.
			if n, ok := c.constInt(e.Index); ok && n >= 0 && n <= int64(len(k.Str)) {
				b := uint64(0)
				if n < int64(len(k.Str)) {
					b = uint64(k.Str[n])
				}
				c.info.Consts[e] = Const{Int: b}
			}
		}
		return types.U8
	case types.Array:
		arr := x.BTF.(*btf.Array)
		if k, ok := c.constInt(e.Index); ok && (k < 0 || uint64(k) >= uint64(arr.Nelems)) {
			// bpftrace's words.
			c.errorf(e.Index, "", "the index %d is out of bounds for array of size %d", k, arr.Nelems)
			return types.Bad
		}
		t, _ := c.fromBTF(arr.Type)
		t.User = x.User && t.Kind != types.Int
		return t
	case types.Ptr:
		t, ok := c.fromBTF(x.BTF)
		if !ok {
			c.errorf(e, "", "cannot index %s", x)
			return types.Bad
		}
		t.User = x.User && t.Kind != types.Int
		return t
	case types.Tuple:
		return c.tupleIndex(e, x)
	}
	c.errorf(e, "", "cannot index %s", x)
	return types.Bad
}

func (c *checker) unary(e *lang.UnaryExpr) types.Type {
	x := c.expr(e.X)
	if x.Kind == types.Invalid {
		return types.Bad
	}
	switch e.Op {
	case "&":
		return c.addrOf(e, x)
	case "!":
		c.wantCond(e.X, x, "the operand of !")
		return types.Bool
	case "*":
		if x.Kind == types.Int && x.Fmt != types.FmtBool {
			// bpftrace 0.2x reads an integer as an address: *kaddr("avenrun")
			// is the u64 there.
			return types.U64
		}
		if x.Kind != types.Ptr {
			c.errorf(e, "", "cannot dereference %s", x)
			return types.Bad
		}
		t, ok := c.fromBTF(x.BTF)
		if ok && t.Kind == types.Struct {
			// The struct's value, kept or printed whole (structvalue.go).
			t.User = x.User
			return t
		}
		if !ok || !t.IsScalar() {
			c.errorf(e, "use -> to read a member", "cannot dereference %s", x)
			return types.Bad
		}
		t.User = x.User && t.Kind != types.Int
		return t
	}
	if !x.IsInt() {
		c.errorf(e, "", "operator %s needs an integer, got %s", e.Op, x)
		return types.Bad
	}
	if e.Op == "-" {
		return types.S64
	}
	return types.Type{Kind: types.Int, Size: 8, Signed: x.Signed}
}

func (c *checker) cond(e *lang.CondExpr) types.Type {
	c.wantCond(e.Cond, c.expr(e.Cond), "a condition")
	a, b := c.expr(e.Then), c.expr(e.Else)
	if a.Kind == types.Invalid || b.Kind == types.Invalid {
		return types.Bad
	}
	switch {
	case a.IsInt() && b.IsInt():
		return types.Type{Kind: types.Int, Size: 8, Signed: a.Signed && b.Signed, Fmt: sameFmt(a, b)}
	case a.Kind == types.String && b.Kind == types.String && (a.Fmt == types.FmtBuf) == (b.Fmt == types.FmtBuf):
		t := types.Str(max(a.Size, b.Size))
		if a.Fmt == types.FmtBuf && b.Fmt == types.FmtBuf {
			// buf() in both: a length byte, then the bytes.
			t.Fmt = types.FmtBuf
		}
		return t
	case a.Kind == b.Kind && a.Kind == types.Addr:
		return a
	case a.Kind == types.Tuple && b.Kind == types.Tuple && sameKind(a, b):
		// (string[13], string[2]) beside (string[2], string[13]):
		// each element as wide as the wider.
		return widenTuple(a, b)
	}
	c.errorf(e, "", "the branches of ?: have different types: %s and %s", a, b)
	return types.Bad
}

func sameFmt(a, b types.Type) types.Fmt {
	if a.Fmt == b.Fmt {
		return a.Fmt
	}
	return types.FmtDec
}

// constInt evaluates a constant integer expression.
func (c *checker) constInt(e lang.Expr) (int64, bool) { return c.info.ConstInt(e) }

// ConstInt evaluates a constant integer expression: literals, named and
// folded constants (lhist's bounds, -(-100)).
func (info *Info) ConstInt(e lang.Expr) (int64, bool) {
	switch e := e.(type) {
	case *lang.ParenExpr:
		return info.ConstInt(e.X)
	case *lang.UnaryExpr:
		v, ok := info.ConstInt(e.X)
		switch e.Op {
		case "-":
			return -v, ok
		case "+":
			return v, ok
		case "~":
			return ^v, ok
		}
		return 0, false
	case *lang.BinaryExpr:
		a, ok1 := info.ConstInt(e.X)
		b, ok2 := info.ConstInt(e.Y)
		if !ok1 || !ok2 {
			return 0, false
		}
		switch e.Op {
		case "+":
			return a + b, true
		case "-":
			return a - b, true
		case "*":
			return a * b, true
		case "/":
			if b != 0 {
				return a / b, true
			}
		case "<<":
			return a << uint(b&63), true
		}
		return 0, false
	}
	k, ok := info.Consts[e]
	if !ok || k.IsStr {
		return 0, false
	}
	return int64(k.Int), true
}

// isUpperName reports whether a name is written as C constants are,
// A-Z, 0-9 and _: only those are taken for kernel enumerators, so that a
// misspelt field is not silently an enum value.
func isUpperName(s string) bool {
	for _, r := range s {
		if !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}
