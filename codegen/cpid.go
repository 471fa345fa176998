package codegen

import (
	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// CpidMap is the array of one u32 where user space writes -c's command's
// process id once it started (session.SetCpid): bpftrace's cpid.
const CpidMap = "cpid"

// cpid leaves in R0 the command's process id, 0 where none started; or,
// with has set, whether one did.
func (g *gen) cpid(has bool) error {
	if _, ok := g.maps.specs[CpidMap]; !ok {
		g.maps.specs[CpidMap] = &ebpf.MapSpec{Name: CpidMap, Type: ebpf.Array, KeySize: 4, ValueSize: 4, MaxEntries: 1}
	}
	key, err := g.frame.alloc(8)
	if err != nil {
		return err
	}
	g.emit(zero8(key)...)
	g.lookup(CpidMap, key)
	none := g.label("nocpid")
	g.emit(asm.JEq.Imm(asm.R0, 0, none), asm.LoadMem(asm.R0, asm.R0, 0, asm.Word))
	g.mark(none)
	if has {
		yes := g.label("hascpid")
		g.emit(asm.JEq.Imm(asm.R0, 0, yes), asm.Mov.Imm(asm.R0, 1))
		g.mark(yes)
	}
	return nil
}
