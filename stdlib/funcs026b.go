package stdlib

import (
	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/lang/types"
)

// bpftrace 0.26's compile-time functions (stdlib.md): what an expression's
// type is, the checker's assertions, and values the checker computes
// (check/constcalls026.go records them).
var funcsCompileTime = []*Func{
	typePred("is_ptr", "a pointer"),
	typePred("is_array", "an array"),
	typePred("is_str", "a string"),
	typePred("is_integer", "an integer"),
	typePred("is_unsigned_integer", "an unsigned integer"),
	typePred("is_literal", "a literal (1, true, \"hello\")"),
	{Name: "strcap", Sig: "strcap(s)", Doc: "the capacity of a string or array: the bytes it can hold, known when the script is compiled", Infer: func(c Call) types.Type {
		arity(c, "strcap(s)", 1, 1)
		return types.S64
	}},
	{Name: "static_assert", Sig: `static_assert(cond, "message")`, Doc: "fails the script with the message where cond, known when the script is compiled, is false", Stmt: true, Infer: func(c Call) types.Type {
		const sig = `static_assert(cond, "message")`
		if arity(c, sig, 2, 2) {
			if _, ok := c.ConstStr(1); !ok && c.Arg(1).Kind != types.Invalid {
				c.Errorf(1, `e.g. static_assert(sizeof(struct sock) > 0, "no sock")`, "static_assert's message must be a string literal")
			}
		}
		return types.None
	}},
	{Name: "fail", Sig: `fail("format", args...)`, Doc: "fails the script with the message, formatted as printf does from literals, where the call is reached: not in an if branch a constant condition leaves out", Stmt: true, Infer: func(c Call) types.Type {
		if arity(c, `fail("format", args...)`, 1, 64) {
			if _, ok := c.ConstStr(0); !ok && c.Arg(0).Kind != types.Invalid {
				c.Errorf(0, `e.g. fail("bad argument %d", $1)`, "fail's format must be a string literal")
			}
		}
		return types.None
	}},
	{Name: "kptr", Sig: "kptr(p)", Doc: "p, marked as a kernel pointer (every pointer is one, outside uprobes and syscall arguments)", Infer: func(c Call) types.Type {
		if !arity(c, "kptr(p)", 1, 1) {
			return types.Bad
		}
		t := c.Arg(0)
		t.User = false
		return t
	}},
	{Name: "uptr", Sig: "uptr(p)", Doc: "p, marked as a pointer into the traced process's memory: read with bpf_probe_read_user", Infer: func(c Call) types.Type {
		if !arity(c, "uptr(p)", 1, 1) {
			return types.Bad
		}
		t := c.Arg(0)
		if t.Kind == types.Ptr || t.IsInt() {
			t.User = true
		}
		return t
	}},
	{Name: "cgroupid", Sig: `cgroupid("/sys/fs/cgroup/PATH")`, Doc: "the cgroup v2 id of the cgroup at the path, read when the script is compiled", Infer: func(c Call) types.Type {
		if arity(c, `cgroupid("path")`, 1, 1) {
			if _, ok := c.ConstStr(0); !ok && c.Arg(0).Kind != types.Invalid {
				c.Errorf(0, `e.g. cgroupid("/sys/fs/cgroup/system.slice")`, "cgroupid needs the cgroup's path as a string literal")
			}
		}
		return types.U64
	}},
	getopt,
	percpuKaddr,
	assertStr,
	defaultStrLength,
	kfuncExist,
	reg,
	kfuncAllowedFn,
	constStrFunc("syscall_name", "syscall_name(nr)", "a system call's name by its number on this architecture: syscall_name(0) is \"read\" on x86_64"),
}

// typePred is one of bpftrace's is_* functions: whether its argument's
// type is of a kind, a constant.
func typePred(name, what string) *Func {
	sig := name + "(x)"
	return &Func{Name: name, Sig: sig, Doc: "whether x is " + what + ", known when the script is compiled", Infer: func(c Call) types.Type {
		arity(c, sig, 1, 1)
		return types.Bool
	}}
}

// getopt is bpftrace 0.26's getopt("name"[, default[, "description"]]):
// the script's named argument --name=VALUE (after the positional ones),
// typed by its default: a bool without one. The checker reads it
// (check/getopt.go).
var getopt = &Func{Name: "getopt", Sig: `getopt("name" [, default [, "description"]])`, Doc: "the script's named argument --name=VALUE given after its other arguments, typed by the default: a bool (--name alone is true) where none is given", Infer: func(c Call) types.Type {
	const sig = `getopt("name" [, default [, "description"]])`
	if !arity(c, sig, 1, 3) {
		return types.Bad
	}
	if _, ok := c.ConstStr(0); !ok && c.Arg(0).Kind != types.Invalid {
		c.Errorf(0, `e.g. getopt("count", 10)`, "getopt needs the argument's name as a string literal")
	}
	if c.NArgs() == 3 {
		if _, ok := c.ConstStr(2); !ok && c.Arg(2).Kind != types.Invalid {
			c.Errorf(2, `e.g. getopt("count", 10, "how many")`, "getopt's description must be a string literal")
		}
	}
	if c.NArgs() == 1 {
		return types.Bool
	}
	switch d := c.Arg(1); {
	case d.Fmt == types.FmtBool:
		return types.Bool
	case d.IsInt():
		if _, ok := c.ConstInt(1); !ok {
			c.Errorf(1, `e.g. getopt("count", 10)`, "getopt's default must be known when the script is compiled")
		}
		return types.S64
	case d.Kind == types.String:
		if _, ok := c.ConstStr(1); !ok {
			c.Errorf(1, `e.g. getopt("name", "eth0")`, "getopt's default must be a string literal")
		}
		return types.Str(ConstStrLen)
	case d.Kind == types.Invalid:
		return types.Bad
	}
	c.Errorf(1, `e.g. getopt("count", 10)`, "getopt's default is a bool, an integer or a string, got %s", c.Arg(1))
	return types.Bad
}}

// u64Type is what percpu_kaddr's pointer points to.
var u64Type = &btf.Int{Name: "uint64", Size: 8}

// percpuKaddr is percpu_kaddr("name"[, cpu]): the address of a per-CPU
// kernel variable (BTF's .data..percpu) on this CPU or CPU cpu (NULL past
// the last), by bpf_this_cpu_ptr and bpf_per_cpu_ptr (codegen/percpu.go).
var percpuKaddr = &Func{Name: "percpu_kaddr", Sig: `percpu_kaddr("name" [, cpu])`, Doc: "the address of a per-CPU kernel variable (from BTF) on this CPU, or on CPU cpu (0 past the last CPU)", Infer: func(c Call) types.Type {
	t := types.Type{Kind: types.Ptr, Size: 8, BTF: u64Type}
	if !arity(c, `percpu_kaddr("name" [, cpu])`, 1, 2) {
		return t
	}
	if _, ok := c.ConstStr(0); !ok && c.Arg(0).Kind != types.Invalid {
		c.Errorf(0, `e.g. percpu_kaddr("runqueues")`, "percpu_kaddr needs the variable's name as a string literal")
	}
	if c.NArgs() == 2 {
		intArg(c, 1, "percpu_kaddr's cpu")
	}
	return t
}}
