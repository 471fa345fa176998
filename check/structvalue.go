package check

import (
	"strconv"
	"strings"

	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
)

// A struct or union as a value, as bpftrace keeps one: read whole from
// a pointer (`*p`), a member that is a struct (`p->se.load`), or the
// probe's `args`; kept in a variable or a map value, printed as
// { .a = 1, .b = 0x0 } (JSON: {"a": 1, "b": 0}). Its bytes are copied
// into a slot of the program's frame: on the BPF stack, or, larger than
// on_stack_limit, in the per-CPU scratch area (codegen/scratch.go).

// MaxStructValue is the largest struct a variable, a map value or
// print() holds: struct task_struct (about 3 KiB on Linux 6.x) fits,
// and several such copies still fit the scratch area's 32 KiB.
const MaxStructValue = 4096

// structValue reports whether t is a struct value small enough to keep.
func structValue(t types.Type) bool {
	return t.Kind == types.Struct && t.Size > 0 && t.Size <= MaxStructValue
}

// storedStruct is the type of a struct value once copied into a
// variable or a map: its bytes are on the BPF stack or in the map, not
// in the traced process, whatever pointer it was read through.
func storedStruct(t types.Type) types.Type {
	if t.Kind == types.Struct {
		t.User = false
	}
	return t
}

// valueHint is the hint where e, of type t, cannot be kept or printed:
// () holds no value; a struct may be too large.
func valueHint(e lang.Expr, t types.Type) string {
	if lang.EmptyTuple(e) {
		return emptyTupleHint(e)
	}
	if t.Kind == types.Struct {
		return "a struct value is copied whole, at most " + strconv.Itoa(MaxStructValue) + " bytes; this one is " + strconv.Itoa(t.Size) + ": read its members (x.NAME)"
	}
	return ""
}

// argsStruct types `args` alone (print(args), $a = args): the probe's
// arguments as one struct. A classic tracepoint's is its record, the
// common_ fields left out; a function's or raw tracepoint's has one
// member per argument, each in 8 bytes.
func (c *checker) argsStruct(e *lang.Ident) types.Type {
	if c.ctx.Record != nil {
		st := &btf.Struct{Name: "args", Size: c.ctx.Record.Size}
		for _, m := range c.ctx.Record.Members {
			if strings.HasPrefix(m.Name, "common_") {
				continue
			}
			if i, ok := m.Type.(*btf.Int); ok && strings.Contains(i.Name, "*") {
				// A format field declared a pointer (const char *
				// filename) prints as one: in hex.
				m.Type = &btf.Pointer{Target: &btf.Void{}}
			}
			st.Members = append(st.Members, m)
		}
		return types.Type{Kind: types.Struct, Size: int(st.Size), BTF: st}
	}
	if c.ctx.Params == nil {
		c.ctxErrorf(e, c.ctx.NoArgs, "no args in this probe")
		return types.Bad
	}
	st := &btf.Struct{Name: "args", Size: uint32(8 * len(c.ctx.Params))}
	for i, p := range c.ctx.Params {
		if !p.Type.IsScalar() || p.BTF == nil {
			c.errorf(e, "print its members: args."+p.Name, "args.%s is %s: a whole args holds integers and pointers", p.Name, p.Type)
			return types.Bad
		}
		st.Members = append(st.Members, btf.Member{Name: p.Name, Type: p.BTF, Offset: btf.Bits(64 * i)})
	}
	return types.Type{Kind: types.Struct, Size: int(st.Size), BTF: st}
}
