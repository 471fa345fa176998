package codegen

import (
	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/check"
)

// Helper programs are added to a script that calls track(); the runtime
// attaches them after the script's own, and a helper that cannot attach
// costs a feature (said on stderr), not the session.
const (
	// HelperUntrack forgets a freed skb, on the kfree_skb and consume_skb
	// tracepoints, so that a new skb at the same address is not followed.
	HelperUntrack = "untrack"
	// HelperFollow follows clones and copies: an fexit program on each
	// function that makes a new skb from a tracked one tracks the new one.
	HelperFollow = "follow"
)

// freeTracepoints are where an skb ends its life.
var freeTracepoints = []string{"kfree_skb", "consume_skb"}

// CopyFuncs make a new skb from the one in their first argument; Args is
// how many arguments they take (fexit finds the return value after them).
var CopyFuncs = []struct {
	Name string
	Args int16
}{{"skb_clone", 2}, {"skb_copy", 2}, {"skb_copy_expand", 4}, {"__pskb_copy_fclone", 4}}

// usesTrack reports whether any probe of the script calls track().
func usesTrack(info *check.Info) bool {
	for c := range info.Calls {
		if c.Name == "track" {
			return true
		}
	}
	return false
}

func (ms *mapSet) trackedMap() {
	if _, ok := ms.specs[TrackedMap]; !ok {
		ms.specs[TrackedMap] = &ebpf.MapSpec{Name: TrackedMap, Type: ebpf.Hash, KeySize: 8, ValueSize: 8, MaxEntries: maxEntries}
	}
}

// track compiles track(): this skb's address goes into the tracked map.
func (g *gen) track() error {
	g.maps.trackedMap()
	key, err := g.frame.alloc(16)
	if err != nil {
		return err
	}
	if err := g.skbPtr(); err != nil {
		return err
	}
	g.vs.pop(asm.R0)
	g.emit(asm.StoreMem(asm.RFP, key, asm.R0, asm.DWord), asm.StoreImm(asm.RFP, key+8, 1, asm.Word), asm.StoreImm(asm.RFP, key+12, 0, asm.Word))
	g.update("", TrackedMap, key, key+8)
	return nil
}

// skipIfTracked jumps to label when this program's skb is tracked: a
// followed skb runs the action whatever the predicate says.
func (g *gen) skipIfTracked(label string) error {
	g.maps.trackedMap()
	key, err := g.readScratch()
	if err != nil {
		return err
	}
	if err := g.skbPtr(); err != nil {
		return err
	}
	g.vs.pop(asm.R0)
	g.emit(asm.StoreMem(asm.RFP, key, asm.R0, asm.DWord))
	g.lookup(TrackedMap, key)
	g.emit(asm.JNE.Imm(asm.R0, 0, label))
	return nil
}

// trackHelpers builds the programs that keep the tracked map right.
func trackHelpers(out *Output) {
	key := int16(-8)
	lookupKey := func(reg asm.Register) asm.Instructions {
		return asm.Instructions{
			asm.StoreMem(asm.RFP, key, reg, asm.DWord),
			asm.LoadMapPtr(asm.R1, 0).WithReference(TrackedMap),
			asm.Mov.Reg(asm.R2, asm.RFP),
			asm.Add.Imm(asm.R2, int32(key)),
		}
	}
	for _, tp := range freeTracepoints {
		// tp_btf: args[0] is the skb.
		insns := asm.Instructions{asm.LoadMem(asm.R6, asm.R1, 0, asm.DWord)}
		insns = append(insns, lookupKey(asm.R6)...)
		insns = append(insns, asm.FnMapDeleteElem.Call(), asm.Mov.Imm(asm.R0, 0), asm.Return())
		out.Programs = append(out.Programs, &Program{Name: "untrack_" + tp, SkbArg: -1, Helper: HelperUntrack, Tracepoint: tp,
			Prog: &ebpf.ProgramSpec{Name: "untrack_" + tp, License: "GPL", Type: ebpf.Tracing, AttachType: ebpf.AttachTraceRawTp, AttachTo: tp, Instructions: insns}})
	}
	for i, fn := range CopyFuncs {
		// fexit: args[0] is the original, and the new skb is the return
		// value, after the arguments (R7 keeps the context).
		insns := asm.Instructions{asm.Mov.Reg(asm.R7, asm.R1), asm.LoadMem(asm.R6, asm.R1, 0, asm.DWord)}
		insns = append(insns, lookupKey(asm.R6)...)
		insns = append(insns,
			asm.FnMapLookupElem.Call(),
			asm.JEq.Imm(asm.R0, 0, "done"),
			asm.LoadMem(asm.R6, asm.R7, 8*fn.Args, asm.DWord),
			asm.JEq.Imm(asm.R6, 0, "done"),
		)
		insns = append(insns, lookupKey(asm.R6)...)
		insns = append(insns,
			asm.Mov.Reg(asm.R3, asm.R2), // the value: any 8 bytes; the key will do
			asm.Mov.Imm(asm.R4, 0),
			asm.FnMapUpdateElem.Call(),
			asm.Mov.Imm(asm.R0, 0).WithSymbol("done"),
			asm.Return(),
		)
		name := "follow_" + string(rune('a'+i))
		out.Programs = append(out.Programs, &Program{Name: name, SkbArg: -1, Helper: HelperFollow,
			Prog: &ebpf.ProgramSpec{Name: name, License: "GPL", Type: ebpf.Tracing, AttachType: ebpf.AttachTraceFExit, AttachTo: fn.Name, Instructions: insns}})
	}
}
