package check

import (
	"path"
	"strings"

	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/lang/types"
)

// MixedRetval is retval's type in an skbret: probe whose functions return
// different types: the value as a signed 64-bit integer (pointers, ints
// sign- or zero-extended as each function's type says), printed as each
// function returns it.
var MixedRetval = types.Type{Kind: types.Int, Size: 8, Signed: true, Fmt: types.FmtRet}

// skbRetType is retval's type in skbret:GLOB: the return type of the
// functions with an skb parameter that the glob matches in vmlinux's BTF,
// where they agree; MixedRetval where they do not; void where none returns
// a value. Functions only in modules are not in this BTF: where nothing
// matches here, the value is MixedRetval.
func (c *checker) skbRetType(glob string) types.Type {
	names := []string{glob}
	if strings.ContainsAny(glob, "*?[") {
		names = nil
		for _, n := range indexOf(c.opts.BTF).funcs {
			if ok, _ := path.Match(glob, n); ok {
				names = append(names, n)
			}
		}
	}
	out, seen := types.Bad, false
	for _, n := range names {
		fns, err := c.opts.BTF.AnyTypesByName(n)
		if err != nil {
			continue
		}
		for _, t := range fns {
			fn, ok := t.(*btf.Func)
			if !ok {
				continue
			}
			proto, ok := fn.Type.(*btf.FuncProto)
			if !ok || !hasSkbParam(proto) {
				continue
			}
			rt := c.retvalType(proto.Return)
			if !seen {
				out, seen = rt, true
				continue
			}
			out = commonRetval(out, rt)
		}
	}
	if !seen {
		return MixedRetval
	}
	return out
}

func hasSkbParam(p *btf.FuncProto) bool {
	for _, x := range p.Params {
		if IsSkbPtr(x.Type) {
			return true
		}
	}
	return false
}

// retvalType is the type a function's return value has in a script: its
// BTF type where that fits a register, void for none.
func (c *checker) retvalType(t btf.Type) types.Type {
	if t == nil {
		return types.None
	}
	if _, ok := t.(*btf.Void); ok {
		return types.None
	}
	r, ok := c.fromBTF(t)
	if !ok || !r.IsScalar() {
		return types.S64
	}
	return r
}

// commonRetval is retval's type in a probe whose specs' functions return
// a and b: the type if they agree; pointers to different types as an
// address printed in hex; otherwise MixedRetval.
func commonRetval(a, b types.Type) types.Type {
	switch {
	case a.Kind == types.Invalid || b.Kind == types.Invalid:
		return types.Bad
	case a.Kind == b.Kind && a.Size == b.Size && a.Signed == b.Signed && a.Fmt == b.Fmt && sameBTF(a.BTF, b.BTF):
		return a
	case a.Kind == types.Ptr && b.Kind == types.Ptr:
		return types.Type{Kind: types.Int, Size: 8, Fmt: types.FmtHex}
	case a.Fmt == types.FmtHex && b.Kind == types.Ptr || b.Fmt == types.FmtHex && a.Kind == types.Ptr:
		return types.Type{Kind: types.Int, Size: 8, Fmt: types.FmtHex}
	}
	return MixedRetval
}

func sameBTF(a, b btf.Type) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a == b || a.TypeName() != "" && a.TypeName() == b.TypeName()
}
