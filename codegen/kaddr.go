package codegen

import (
	"fmt"

	"github.com/cilium/ebpf/asm"
	"github.com/skbtrace/skbtrace/lang"
)

// kaddr pushes a kernel symbol's address, known when the script is
// compiled (bpftrace's kaddr("name")).
func (g *gen) kaddr(c *lang.CallExpr) error {
	name := g.info.Consts[c.Args[0]].Str
	var addr uint64
	if g.ksym != nil {
		addr = g.ksym(name)
	}
	if addr == 0 {
		return &spanError{span: c.Args[0].Span(), hint: "the name is as /proc/kallsyms lists it; a kernel built without CONFIG_KALLSYMS_ALL lists its functions only, not its data (avenrun); ksym(func) prints the traced function's",
			msg: fmt.Sprintf("kaddr: no kernel symbol %q", name)}
	}
	g.emit(asm.LoadImm(asm.R0, int64(addr), asm.DWord))
	return g.vs.push(asm.R0)
}

// spanError is an error at a part of the script the generator found wrong
// where only the running kernel could say (a symbol it lacks).
type spanError struct {
	span      lang.Span
	msg, hint string
}

func (e *spanError) Error() string { return fmt.Sprintf("%s: %s", e.span.Start, e.msg) }
