package stdlib

import (
	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/lang/types"
)

// More of bpftrace 0.26's compile-time helpers (stdlib.md), their values
// recorded by the checker (check/constcalls026.go).

// assertStr is assert_str(x): an error at x unless it is string-like (a
// string, a char array or a char pointer).
var assertStr = &Func{Name: "assert_str", Sig: "assert_str(x)", Doc: "an error where x is not string-like (a string, or a char array or pointer), known when the script is compiled", Stmt: true, Infer: func(c Call) types.Type {
	if arity(c, "assert_str(x)", 1, 1) {
		if t := c.Arg(0); t.Kind != types.Invalid && !StringLike(t) {
			c.Errorf(0, "", "assert_str: %s is not a string", t)
		}
	}
	return types.None
}}

// StringLike reports whether t is a string, or an array of or a pointer
// to one-byte integers (char).
func StringLike(t types.Type) bool {
	switch t.Kind {
	case types.String:
		return t.Fmt == types.FmtDec
	case types.Array:
		if a, ok := t.BTF.(*btf.Array); ok {
			return byteInt(a.Type)
		}
	case types.Ptr:
		return t.BTF != nil && byteInt(t.BTF)
	}
	return false
}

// byteInt reports whether t is a one-byte integer (char).
func byteInt(t btf.Type) bool {
	i, ok := btf.UnderlyingType(t).(*btf.Int)
	return ok && i.Size == 1
}

// defaultStrLength is default_str_length: the bytes str() reads without a
// length, max_strlen's where the script sets it, else 64 (63 and a NUL).
var defaultStrLength = &Func{Name: "default_str_length", Sig: "default_str_length()", Doc: "the bytes str() reads where no length is given: max_strlen, or 64", Infer: func(c Call) types.Type {
	arity(c, "default_str_length()", 0, 0)
	return types.S64
}}

// kfuncExist is kfunc_exist("name"): whether the kernel's BTF has a
// function of that name.
var kfuncExist = &Func{Name: "kfunc_exist", Sig: `kfunc_exist("name")`, Doc: "whether the kernel's BTF describes a function of that name, known when the script is compiled", Infer: func(c Call) types.Type {
	if arity(c, `kfunc_exist("name")`, 1, 1) {
		if _, ok := c.ConstStr(0); !ok && c.Arg(0).Kind != types.Invalid {
			c.Errorf(0, `e.g. kfunc_exist("bpf_task_acquire")`, "kfunc_exist needs the function's name as a string literal")
		}
	}
	return types.Bool
}}
