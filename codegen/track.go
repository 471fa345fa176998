package codegen

import (
	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/check"
)

// Helper programs are added to a script that calls track(); the runtime
// attaches them after the script's own, and a helper that cannot attach
// costs a feature (said on stderr), not the session.
const (
	// HelperUntrack ends a followed skb's path where it is freed, on the
	// kfree_skb and consume_skb tracepoints: the skb: programs then ignore
	// it in the functions that release it, and forget it when a new skb
	// takes its address.
	HelperUntrack = "untrack"
	// HelperFollow follows clones and copies: an fexit program on each
	// function that makes a new skb from a tracked one tracks the new one.
	HelperFollow = "follow"
	// HelperForget marks a followed skb freed where its memory goes back
	// (trackEnds), whichever way it was freed: skbs freed without the
	// free tracepoints (a TCP segment coalesced into another, its head
	// stolen) must not hand their packet to the next skb at their
	// address. The entry stays, ended, so that the returns of the calls
	// that freed it still run (skbret:, --graph).
	HelperForget = "forget"
)

// trackEnds are where an skb's memory goes back, after every function
// that takes it: fentry programs there mark it ended with its
// fingerprint, read while the skb is still whole.
// kfree_skb_partial and napi_skb_free_stolen_head free an skb whose head
// was stolen straight to the slab, without kfree_skbmem.
var trackEnds = []string{"kfree_skbmem", "napi_skb_cache_put", "kfree_skb_partial", "napi_skb_free_stolen_head"}

// The tracked map's values: a state, then, once the skb is freed, what
// tells it from a new skb at its address (len, head, data: a new skb gets a
// new buffer and length); then the skb's logical packet (packet.go): the
// packet's id, the skb it was made from, and the edge that made it.
const (
	trackFollowed = 1 // track() was called on it, or it copies a followed skb
	trackEnded    = 2 // freed; the fingerprint follows
	// trackValueSize: state u32, len u32, head u64, data u64, then the
	// packet's trackPacketSize bytes at trackPacketOff.
	trackValueSize  = 48
	trackPacketOff  = 24
	trackPacketSize = 24
)

// trackPrint are the members of struct sk_buff an ended skb's fingerprint
// keeps, at their offsets in the tracked map's value.
var trackPrint = []struct {
	member string
	off    int16
	size   asm.Size
}{{"len", 4, asm.Word}, {"head", 8, asm.DWord}, {"data", 16, asm.DWord}}

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
		// LRU: a full map forgets the skbs least recently seen (freed
		// ones first, as nothing looks them up again) rather than
		// refusing a new packet.
		ms.specs[TrackedMap] = &ebpf.MapSpec{Name: TrackedMap, Type: ebpf.LRUHash, KeySize: 8, ValueSize: trackValueSize, MaxEntries: TrackedEntries}
	}
	ms.packetSeqMap()
}

// TrackedEntries bounds the skbs track() follows at once: live ones, and
// freed ones kept until their address is used again or the LRU map needs
// the room.
const TrackedEntries = 16384

// track compiles track(): this skb's address goes into the tracked map,
// a logical packet of its own, unless it is followed already (the gate
// read its packet into g.trk).
func (g *gen) track() error {
	g.maps.trackedMap()
	key, err := g.frame.alloc(8 + trackValueSize)
	if err != nil {
		return err
	}
	if err := g.skbPtr(); err != nil {
		return err
	}
	g.vs.pop(asm.R0)
	g.emit(asm.StoreMem(asm.RFP, key, asm.R0, asm.DWord))
	done := g.label("tracked")
	slot := g.trk
	if slot == 0 {
		// No gate (a loop's callback): a packet of its own each time.
		if slot, err = g.frame.alloc(trackPacketSize); err != nil {
			return err
		}
		g.emit(zero8(slot)...)
	}
	g.emit(asm.LoadMem(asm.R1, asm.RFP, slot, asm.DWord), asm.JNE.Imm(asm.R1, 0, done))
	g.newPacket(slot)
	g.emit(asm.StoreImm(asm.RFP, key+8, trackFollowed, asm.Word), asm.StoreImm(asm.RFP, key+12, 0, asm.Word))
	g.emit(zero8(key + 16)...)
	g.emit(zero8(key + 24)...)
	for off := int16(0); off < trackPacketSize; off += 8 {
		g.emit(asm.LoadMem(asm.R1, asm.RFP, slot+off, asm.DWord), asm.StoreMem(asm.RFP, key+8+trackPacketOff+off, asm.R1, asm.DWord))
	}
	g.update(TrackedMap, key, key+8)
	g.mark(done)
	return nil
}

// trackGate starts every skb: program of a script that tracks. A followed
// skb jumps to body: it runs the action whatever the predicate says. A
// freed one ends the event (an skbret: program's return runs the action:
// below): its path ended where it was freed, and the
// functions that release it, which still see its mark, must not follow it
// again. A new skb at a freed one's address (its fingerprint differs) is
// forgotten, and goes on to the predicate as any other.
func (g *gen) trackGate(body string) error {
	g.maps.trackedMap()
	var key, val, tmp int16
	for _, p := range []*int16{&key, &val, &tmp} {
		off, err := g.frame.alloc(8)
		if err != nil {
			return err
		}
		*p = off
	}
	trk, err := g.frame.keep(trackPacketSize)
	if err != nil {
		return err
	}
	g.trk = trk
	for off := int16(0); off < trackPacketSize; off += 8 {
		g.emit(zero8(trk + off)...)
	}
	if err := g.skbPtr(); err != nil {
		return err
	}
	g.vs.pop(asm.R0)
	g.emit(asm.StoreMem(asm.RFP, key, asm.R0, asm.DWord))
	g.lookup(TrackedMap, key)
	fresh, reused, followed := g.label("untracked"), g.label("reused"), g.label("followed")
	// A followed skb's packet goes into g.trk, for print's head.
	g.emit(asm.Ja.Label(followed + "_skip"))
	g.emit(asm.Mov.Reg(asm.R1, asm.R0).WithSymbol(followed))
	for off := int16(0); off < trackPacketSize; off += 8 {
		g.emit(asm.LoadMem(asm.R2, asm.R1, trackPacketOff+off, asm.DWord), asm.StoreMem(asm.RFP, trk+off, asm.R2, asm.DWord))
	}
	g.emit(asm.Ja.Label(body))
	g.mark(followed + "_skip")
	if g.target.Return {
		// An skbret: program returns from a call whose skb its entry kept:
		// followed or freed since (the call freed it, or was called as it
		// was being freed; the freed skb's fingerprint is not to be trusted
		// then: the allocator writes into it), the return is the followed
		// packet's. A new skb at a freed one's address is forgotten by its
		// first skb: program, at the entry of the call, before its return.
		g.emit(asm.JEq.Imm(asm.R0, 0, fresh), asm.Ja.Label(followed))
		g.mark(fresh)
		return nil
	}
	g.emit(
		asm.JEq.Imm(asm.R0, 0, fresh),
		asm.LoadMem(asm.R1, asm.R0, 0, asm.Word),
		asm.JEq.Imm(asm.R1, trackFollowed, followed),
		asm.StoreMem(asm.RFP, val, asm.R0, asm.DWord),
	)
	for _, m := range trackPrint {
		off, err := skbOffset(g.info.SkbType, m.member)
		if err != nil {
			return err
		}
		g.emit(zero8(tmp)...)
		g.emit(asm.LoadMem(asm.R3, asm.RFP, key, asm.DWord), asm.Add.Imm(asm.R3, off))
		g.probeRead(tmp, m.size.Sizeof())
		g.emit(
			asm.LoadMem(asm.R1, asm.RFP, val, asm.DWord),
			asm.LoadMem(asm.R2, asm.R1, m.off, m.size),
			asm.LoadMem(asm.R0, asm.RFP, tmp, m.size),
			asm.JNE.Reg(asm.R0, asm.R2, reused),
		)
	}
	g.emit(asm.Ja.Label(exitLabel))
	g.emit(
		asm.LoadMapPtr(asm.R1, 0).WithReference(TrackedMap).WithSymbol(reused),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, int32(key)),
		asm.FnMapDeleteElem.Call(),
	)
	g.mark(fresh)
	return nil
}

// trackHelpers builds the programs that keep the tracked map right.
func trackHelpers(out *Output, skb *btf.Struct) error {
	key, val := int16(-8), int16(-8-trackValueSize)
	lookupKey := func(reg asm.Register) asm.Instructions { return trackedKeyInsns(reg, key) }
	ends := append(append([]string{}, freeTracepoints...), trackEnds...)
	for i, tp := range ends {
		// tp_btf, or fentry on trackEnds: args[0] is the skb. A followed
		// one is marked ended, with its fingerprint read into the map's
		// value (R7 points to it).
		insns := asm.Instructions{asm.LoadMem(asm.R6, asm.R1, 0, asm.DWord)}
		insns = append(insns, lookupKey(asm.R6)...)
		insns = append(insns,
			asm.FnMapLookupElem.Call(),
			asm.JEq.Imm(asm.R0, 0, "done"),
			asm.Mov.Reg(asm.R7, asm.R0),
		)
		ended, err := endedInsns(skb)
		if err != nil {
			return err
		}
		insns = append(insns, ended...)
		insns = append(insns, asm.Mov.Imm(asm.R0, 0).WithSymbol("done"), asm.Return())
		if i >= len(freeTracepoints) {
			name := "forget_" + tp
			out.Programs = append(out.Programs, &Program{Name: name, SkbArg: -1, Helper: HelperForget,
				Attach: Attach{Kind: AttachFentry, Text: "track()", Func: tp},
				Prog:   &ebpf.ProgramSpec{Name: name, License: "GPL", Type: ebpf.Tracing, AttachType: ebpf.AttachTraceFEntry, AttachTo: tp, Instructions: insns}})
			continue
		}
		out.Programs = append(out.Programs, &Program{Name: "untrack_" + tp, SkbArg: -1, Helper: HelperUntrack, Tracepoint: tp,
			Attach: Attach{Kind: AttachTpBTF, Text: "track()", Name: tp},
			Prog:   &ebpf.ProgramSpec{Name: "untrack_" + tp, License: "GPL", Type: ebpf.Tracing, AttachType: ebpf.AttachTraceRawTp, AttachTo: tp, Instructions: insns}})
	}
	for i, fn := range CopyFuncs {
		// fexit: args[0] is the original, and the new skb is the return
		// value, after the arguments (R7 keeps the context). The copy
		// joins the original's packet.
		kind := int32(EdgeCopy)
		if fn.Name == "skb_clone" {
			kind = EdgeClone
		}
		insns := asm.Instructions{asm.Mov.Reg(asm.R7, asm.R1), asm.LoadMem(asm.R6, asm.R1, 0, asm.DWord)}
		insns = append(insns, lookupKey(asm.R6)...)
		insns = append(insns,
			asm.FnMapLookupElem.Call(),
			asm.JEq.Imm(asm.R0, 0, "done"),
			asm.LoadMem(asm.R1, asm.R0, 0, asm.Word),
			asm.JNE.Imm(asm.R1, trackFollowed, "done"),
			asm.LoadMem(asm.R1, asm.R0, trackPacketOff, asm.DWord),
			asm.StoreMem(asm.RFP, val+trackPacketOff, asm.R1, asm.DWord),
			asm.StoreMem(asm.RFP, val+trackPacketOff+8, asm.R6, asm.DWord),
			storeImm64(val+trackPacketOff+16, kind),
			asm.LoadMem(asm.R6, asm.R7, 8*fn.Args, asm.DWord),
			asm.JEq.Imm(asm.R6, 0, "done"),
			asm.StoreImm(asm.RFP, val, trackFollowed, asm.Word),
			asm.StoreImm(asm.RFP, val+4, 0, asm.Word),
		)
		insns = append(insns, zero8(val+8)...)
		insns = append(insns, zero8(val+16)...)
		insns = append(insns, lookupKey(asm.R6)...)
		insns = append(insns,
			asm.Mov.Reg(asm.R3, asm.RFP),
			asm.Add.Imm(asm.R3, int32(val)),
			asm.Mov.Imm(asm.R4, 0),
			asm.FnMapUpdateElem.Call(),
			asm.Mov.Imm(asm.R0, 0).WithSymbol("done"),
			asm.Return(),
		)
		name := "follow_" + string(rune('a'+i))
		out.Programs = append(out.Programs, &Program{Name: name, SkbArg: -1, Helper: HelperFollow,
			Attach: Attach{Kind: AttachFexit, Text: "track()", Func: fn.Name},
			Prog:   &ebpf.ProgramSpec{Name: name, License: "GPL", Type: ebpf.Tracing, AttachType: ebpf.AttachTraceFExit, AttachTo: fn.Name, Instructions: insns}})
	}
	out.Programs = append(out.Programs, edgeHelpers(skb)...)
	return nil
}

// trackedKeyInsns store the skb in reg at the frame's key and set R1 and
// R2 for a call on track()'s map with it.
func trackedKeyInsns(reg asm.Register, key int16) asm.Instructions {
	return asm.Instructions{
		asm.StoreMem(asm.RFP, key, reg, asm.DWord),
		asm.LoadMapPtr(asm.R1, 0).WithReference(TrackedMap),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, int32(key)),
	}
}

// endedInsns mark the followed skb whose value R7 points to ended, with
// its fingerprint (trackPrint) read from the skb in R6 into the value.
func endedInsns(skb *btf.Struct) (asm.Instructions, error) {
	insns := asm.Instructions{asm.StoreImm(asm.R7, 0, trackEnded, asm.Word)}
	for _, m := range trackPrint {
		off, err := skbOffset(skb, m.member)
		if err != nil {
			return nil, err
		}
		insns = append(insns,
			asm.Mov.Reg(asm.R1, asm.R7),
			asm.Add.Imm(asm.R1, int32(m.off)),
			asm.Mov.Imm(asm.R2, int32(m.size.Sizeof())),
			asm.Mov.Reg(asm.R3, asm.R6),
			asm.Add.Imm(asm.R3, off),
			asm.FnProbeReadKernel.Call(),
		)
	}
	return insns, nil
}
