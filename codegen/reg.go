package codegen

import (
	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/stdlib"
)

// reg reads bpftrace's reg("name") from the probe's struct pt_regs, which
// R9 keeps (the checker allowed it in kprobe, kretprobe, uprobe and
// uretprobe probes only, whose context that is).
func (g *gen) reg(e *lang.CallExpr) error {
	k := g.info.Consts[lang.Unparen(e.Args[0])]
	off, ok := stdlib.RegOffset("", k.Str)
	if !ok || g.ctx != ctxRegs {
		return unsupported(e, `reg("`+k.Str+`") here`)
	}
	g.emit(asm.LoadMem(asm.R0, asm.R9, off, asm.DWord))
	return g.vs.push(asm.R0)
}
