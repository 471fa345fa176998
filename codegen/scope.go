package codegen

import (
	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/lang"
)

// ScopeMap holds the network namespaces --pod, --namespace, --container
// and --netns let through, by inode (a u32 key, a u8 value of 1): the
// predicate in_scope(netns) that passes.Scope writes into every skb probe
// looks its argument up there. User space fills it before the programs
// attach and keeps it current while tracing, as pods come and go.
const ScopeMap = "scope"

// ScopeEntries bounds ScopeMap: network namespaces on one node.
const ScopeEntries = 16384

func (ms *mapSet) scopeMap() {
	if _, ok := ms.specs[ScopeMap]; !ok {
		ms.specs[ScopeMap] = &ebpf.MapSpec{Name: ScopeMap, Type: ebpf.Hash, KeySize: 4, ValueSize: 1, MaxEntries: ScopeEntries}
	}
}

// inScope compiles scope.netns(inode [, otherwise]): 1 where ScopeMap
// holds the inode (or, where it is 0, otherwise's), 0 where it does not.
// otherwise is evaluated only where inode is 0: a packet with a device
// pays one read of its namespace.
func (g *gen) inScope(c *lang.CallExpr) error {
	g.maps.scopeMap()
	if err := g.expr(c.Args[0]); err != nil {
		return err
	}
	if len(c.Args) == 2 {
		have := g.label("scope_have")
		g.vs.pop(asm.R0)
		g.emit(asm.JNE.Imm(asm.R0, 0, have))
		if err := g.expr(c.Args[1]); err != nil {
			return err
		}
		g.vs.pop(asm.R0)
		g.mark(have)
		if err := g.vs.push(asm.R0); err != nil {
			return err
		}
	}
	// The key goes in the slot probe reads land in, free again once the
	// inode is read: the filters take no stack from the probe's own
	// predicate and action.
	key, err := g.readScratch()
	if err != nil {
		return err
	}
	g.vs.pop(asm.R0)
	g.emit(asm.StoreMem(asm.RFP, key, asm.R0, asm.Word))
	g.lookup(ScopeMap, key)
	out := g.label("scope_out")
	g.emit(asm.JEq.Imm(asm.R0, 0, out), asm.Mov.Imm(asm.R0, 1))
	g.mark(out)
	return g.vs.push(asm.R0)
}
