package check

import (
	"fmt"
	"strings"

	"github.com/cilium/ebpf/btf"
	"golang.org/x/sys/unix"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
	"github.com/skbtrace/skbtrace/stdlib"
)

// constCall026 records the value of bpftrace 0.26's compile-time
// functions (stdlib.md: is_*, strcap, cgroupid, syscall_name of a
// constant) and checks static_assert and fail, which report their
// message as an error at the call. It reports whether e was one.
func (c *checker) constCall026(e *lang.CallExpr) bool {
	arg := func(i int) types.Type {
		if i < len(e.Args) {
			return c.info.Types[e.Args[i]]
		}
		return types.Bad
	}
	switch e.Name {
	case "is_ptr", "is_array", "is_str", "is_integer", "is_unsigned_integer", "is_literal":
		if len(e.Args) == 1 {
			c.info.Consts[e] = boolConst(typeIs(e.Name, arg(0), e.Args[0]))
		}
	case "strcap":
		if len(e.Args) == 1 {
			if n, ok := capacity(arg(0)); ok {
				c.info.Consts[e] = Const{Int: uint64(n)}
			} else if arg(0).Kind != types.Invalid {
				c.errorf(e.Args[0], `e.g. strcap(comm)`, "strcap needs a string or an array, got %s", arg(0))
			}
		}
	case "cgroupid":
		if s, ok := c.info.Consts[lang.Unparen(e.Args[0])]; ok && s.IsStr {
			var st unix.Stat_t
			if err := unix.Stat(s.Str, &st); err != nil {
				c.errorf(e.Args[0], "give the path of a cgroup v2 directory, e.g. /sys/fs/cgroup/system.slice", "cgroupid: %v", err)
			} else {
				c.info.Consts[e] = Const{Int: st.Ino}
			}
		}
	case "default_str_length":
		n := uint64(64)
		if c.info.Config.MaxStrlen > 0 {
			n = uint64(c.info.Config.MaxStrlen)
		}
		c.info.Consts[e] = Const{Int: n}
	case "kfunc_exist":
		if s, ok := c.info.Consts[lang.Unparen(e.Args[0])]; ok && s.IsStr && len(e.Args) == 1 {
			var fn *btf.Func
			c.info.Consts[e] = boolConst(c.opts.BTF.TypeByName(s.Str, &fn) == nil)
		}
	case "reg":
		c.regCall(e)
	case "kfunc_allowed":
		c.kfuncAllowedCall(e)
	case "comm":
		c.commPidCall(e)
	case "syscall_name":
		if n, ok := c.constInt(e.Args[0]); ok && len(e.Args) == 1 {
			c.info.Consts[e] = Const{Str: stdlib.SyscallName(n), IsStr: true}
		}
	case "static_assert":
		if len(e.Args) != 2 {
			break
		}
		v, ok := c.constBool(e.Args[0])
		if !ok {
			c.errorf(e.Args[0], "static_assert tests what is known when the script is compiled; test a value with assert(cond, msg)", "static_assert's condition is not known when the script is compiled")
		} else if !v && c.dead == 0 {
			c.errorf(e, "", "%s", c.info.Consts[lang.Unparen(e.Args[1])].Str)
		}
	case "getopt":
		c.getopt(e, c.info.Types[e])
	case "fail":
		if c.dead > 0 || len(e.Args) == 0 {
			break
		}
		c.errorf(e, "", "%s", c.failText(e))
	default:
		return false
	}
	return true
}

// failText is fail()'s message: its format with its arguments, which
// are constants.
func (c *checker) failText(e *lang.CallExpr) string {
	format := c.info.Consts[lang.Unparen(e.Args[0])].Str
	var args []any
	for _, a := range e.Args[1:] {
		if k, ok := c.info.Consts[lang.Unparen(a)]; ok && k.IsStr {
			args = append(args, k.Str)
		} else if n, ok := c.constInt(a); ok {
			args = append(args, n)
		} else {
			c.errorf(a, "fail's arguments are formatted when the script is compiled", "fail needs a value known when the script is compiled")
			args = append(args, "?")
		}
	}
	return strings.TrimRight(fmt.Sprintf(strings.ReplaceAll(format, "%l", "%"), args...), "\n")
}

func boolConst(b bool) Const {
	if b {
		return Const{Int: 1}
	}
	return Const{Int: 0}
}

// typeIs answers an is_* function of x, whose type is t.
func typeIs(name string, t types.Type, x lang.Expr) bool {
	switch name {
	case "is_ptr":
		return t.Kind == types.Ptr
	case "is_array":
		return t.Kind == types.Array
	case "is_str":
		return t.Kind == types.String && t.Fmt != types.FmtBuf
	case "is_integer":
		return t.Kind == types.Int
	case "is_unsigned_integer":
		return t.Kind == types.Int && !t.Signed
	}
	switch lang.Unparen(x).(type) { // is_literal
	case *lang.IntLit, *lang.StrLit:
		return true
	case *lang.Ident:
		return t.Fmt == types.FmtBool && (lang.Unparen(x).(*lang.Ident).Name == "true" || lang.Unparen(x).(*lang.Ident).Name == "false")
	}
	return false
}

// capacity is strcap's value: the bytes a string or an array holds.
func capacity(t types.Type) (int, bool) {
	switch t.Kind {
	case types.String:
		return t.Size, true
	case types.Array:
		if n, err := btf.Sizeof(t.BTF); err == nil {
			return n, true
		}
	}
	return 0, false
}

// constBool evaluates a condition known when the script is compiled:
// constants, comparisons of constants, !, && and ||.
func (c *checker) constBool(e lang.Expr) (bool, bool) {
	switch x := lang.Unparen(e).(type) {
	case *lang.UnaryExpr:
		if x.Op == "!" {
			v, ok := c.constBool(x.X)
			return !v, ok
		}
	case *lang.BinaryExpr:
		switch x.Op {
		case "&&", "||":
			a, ok1 := c.constBool(x.X)
			b, ok2 := c.constBool(x.Y)
			if x.Op == "&&" {
				return a && b, ok1 && ok2
			}
			return a || b, ok1 && ok2
		case "==", "!=", "<", "<=", ">", ">=":
			a, ok1 := c.constInt(x.X)
			b, ok2 := c.constInt(x.Y)
			if !ok1 || !ok2 {
				ka, sa := c.info.Consts[lang.Unparen(x.X)]
				kb, sb := c.info.Consts[lang.Unparen(x.Y)]
				if sa && sb && ka.IsStr && kb.IsStr && (x.Op == "==" || x.Op == "!=") {
					return (ka.Str == kb.Str) == (x.Op == "=="), true
				}
				return false, false
			}
			switch x.Op {
			case "==":
				return a == b, true
			case "!=":
				return a != b, true
			case "<":
				return a < b, true
			case "<=":
				return a <= b, true
			case ">":
				return a > b, true
			}
			return a >= b, true
		}
	}
	n, ok := c.constInt(e)
	return n != 0, ok
}

// deadIf checks a branch, as not reached where dead is set.
func (c *checker) deadIf(dead bool, check func()) {
	if dead {
		c.dead++
		defer func() { c.dead-- }()
	}
	check()
}

// probeType is probetype: the probe's kind as bpftrace names it, a
// constant string ("special" for begin and end).
func (c *checker) probeType(e *lang.Ident) types.Type {
	kind := ""
	for i, s := range c.ctx.Specs {
		k := probeTypeName(s.Spec)
		if i > 0 && k != kind {
			c.errorf(e, "split the probe list by kind", "probetype differs between this probe's specs (%s, %s)", kind, k)
			return types.Bad
		}
		kind = k
	}
	c.info.Consts[e] = Const{Str: kind, IsStr: true}
	return types.Str(stdlib.ConstStrLen)
}

func probeTypeName(s *lang.ProbeSpec) string {
	switch s.Kind {
	case lang.ProbeBegin, lang.ProbeEnd:
		return "special"
	case lang.ProbeFentry:
		return "fentry"
	case lang.ProbeFexit:
		return "fexit"
	}
	if s.Kind == lang.ProbeTracepoint && s.Raw {
		return "rawtracepoint"
	}
	return string(s.Kind)
}
