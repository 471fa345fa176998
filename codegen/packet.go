package codegen

import (
	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/lang"
)

// A logical packet is what track() follows across the skbs one send or
// receive becomes: each followed skb's entry in the tracked map carries,
// at trackPacketOff, the packet's id (PacketID: the CPU that tracked its
// first skb, plus one, in the top 16 bits, and that CPU's count of packets
// below), the skb it was made from, and the edge that made it (PacketEdge).
// A script that tracks puts these 24 bytes in each print record's head
// (Event.Packet), so the output can group the hops of a packet's skbs.

// PacketSeqMap counts, per CPU, the packets track() has started.
const PacketSeqMap = "pktseq"

// Edge kinds: how an skb joined its logical packet.
const (
	EdgeOrigin      = 1 // track() began the packet here
	EdgeClone       = 2 // skb_clone
	EdgeCopy        = 3 // skb_copy, pskb_copy and the like
	EdgeSegment     = 4 // a GSO segment: index of count
	EdgeFragment    = 5 // an IP fragment: index
	EdgeReassembled = 6 // the datagram reassembled from fragments
	EdgeMerged      = 7 // GRO merged it into the skb its parent field names
	EdgeGROHead     = 8 // a GRO head a followed skb was merged into
	EdgeEncap       = 9 // put in a tunnel: UDP, index the port, parent the VNI; IP (index 0), count the outer protocol
)

// The packet's fields in the tracked map's value and in a print record
// (Event.Packet: PrintPacket, PrintParent, PrintEdge). The edge is a u64:
// kind in its low byte, then at bytes 2, 4 and 6 the u16s spawned (the
// skbs made from this one by splits, so far), index and count.
const (
	PrintPacket = printHead
	PrintParent = printHead + 8
	PrintEdge   = printHead + 16

	edgeSpawnOff = 2
	edgeIndexOff = 4
	edgeCountOff = 6
)

// PacketEdge is an edge word's fields.
type PacketEdge struct {
	Kind                  uint8
	Spawned, Index, Count uint16
}

// DecodeEdge splits an edge word.
func DecodeEdge(e uint64) PacketEdge {
	return PacketEdge{Kind: uint8(e), Spawned: uint16(e >> 16), Index: uint16(e >> 32), Count: uint16(e >> 48)}
}

func (ms *mapSet) packetSeqMap() {
	if _, ok := ms.specs[PacketSeqMap]; !ok {
		ms.specs[PacketSeqMap] = &ebpf.MapSpec{Name: PacketSeqMap, Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: 8, MaxEntries: 1}
	}
}

// newPacket writes a new packet at slot: its id, no parent, EdgeOrigin.
func (g *gen) newPacket(slot int16) {
	g.emit(zero8(slot)...)
	g.lookup(PacketSeqMap, slot)
	none := g.label("noseq")
	g.emit(
		asm.JEq.Imm(asm.R0, 0, none),
		asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
		asm.Add.Imm(asm.R1, 1),
		asm.StoreMem(asm.R0, 0, asm.R1, asm.DWord),
		asm.StoreMem(asm.RFP, slot, asm.R1, asm.DWord),
		asm.FnGetSmpProcessorId.Call(),
		asm.Add.Imm(asm.R0, 1),
		asm.LSh.Imm(asm.R0, 48),
		asm.LoadMem(asm.R1, asm.RFP, slot, asm.DWord),
		asm.Or.Reg(asm.R1, asm.R0),
		asm.StoreMem(asm.RFP, slot, asm.R1, asm.DWord),
	)
	g.mark(none)
	g.emit(zero8(slot + 8)...)
	g.emit(storeImm64(slot+16, EdgeOrigin))
}

// packetHead writes a print record's packet fields at rec: what the gate
// or track() left in g.trk, or zeros in a program without one.
func (g *gen) packetHead(rec int16) {
	for off := int16(0); off < trackPacketSize; off += 8 {
		if g.trk == 0 || g.head != nil {
			g.emit(zero8(rec + PrintPacket + off)...)
			continue
		}
		g.emit(asm.LoadMem(asm.R0, asm.RFP, g.trk+off, asm.DWord), asm.StoreMem(asm.RFP, rec+PrintPacket+off, asm.R0, asm.DWord))
	}
}

// packetFields are where the logical packet's builtins are in the packet
// fields g.trk keeps: offset, and for the edge's parts, the size.
var packetFields = map[string]struct {
	off  int16
	size asm.Size
}{
	"packet": {0, asm.DWord}, "pkt_parent": {8, asm.DWord}, "pkt_edge": {16, asm.Byte},
	"pkt_index": {16 + edgeIndexOff, asm.Half}, "pkt_count": {16 + edgeCountOff, asm.Half},
}

// packetField puts a logical packet builtin in R0: read from what the gate
// or track() left in g.trk; in a tracking script's probe without the gate
// (gatedProbe), from the skb's entry in the tracked map, looked up here; 0
// where the skb is not followed, in a script that does not track, or in
// a callback (g.head).
func (g *gen) packetField(name string) error {
	f := packetFields[name]
	switch {
	case g.head != nil || !g.maps.track || !g.hasSkb():
		g.emit(asm.Mov.Imm(asm.R0, 0))
		return nil
	case g.trk != 0:
		g.emit(asm.LoadMem(asm.R0, asm.RFP, g.trk+f.off, f.size))
		return nil
	}
	g.maps.trackedMap()
	key, err := g.readScratch()
	if err != nil {
		return err
	}
	none, done := g.label("nopacket"), g.label("packet")
	if err := g.skbPtrOr(none); err != nil {
		return err
	}
	g.vs.pop(asm.R0)
	g.emit(asm.StoreMem(asm.RFP, key, asm.R0, asm.DWord))
	g.lookup(TrackedMap, key)
	g.emit(
		asm.JEq.Imm(asm.R0, 0, none),
		asm.LoadMem(asm.R1, asm.R0, 0, asm.Word),
		asm.JNE.Imm(asm.R1, trackFollowed, none),
		asm.LoadMem(asm.R0, asm.R0, trackPacketOff+f.off, f.size),
		asm.Ja.Label(done),
		asm.Mov.Imm(asm.R0, 0).WithSymbol(none),
	)
	g.mark(done)
	return nil
}

// gatedProbe reports whether a tracking script's probe with an skb takes
// track()'s gate (trackGate: a followed skb runs the action whatever the
// predicate says). Every probe does but one that reads the logical
// packet's builtins (packet, pkt_edge...) and is not an skb: or skbret:
// probe nor calls track(), print() or capture(): it runs as written, and
// looks the skb's packet up where it reads it (packetField). whydrop's
// drop block is one: the gate's ways into its body made the verifier walk
// it once for each, past its 1,000,000 instructions with --nftrace.
func gatedProbe(p *lang.Probe, kind lang.ProbeKind) bool {
	if kind == lang.ProbeSkb || kind == lang.ProbeSkbRet {
		return true
	}
	reads, calls := false, false
	lang.Inspect(p, func(n lang.Node) bool {
		switch n := n.(type) {
		case *lang.CallExpr:
			calls = calls || n.Name == "track" || n.Name == "print" || n.Name == "capture"
		case *lang.Ident:
			_, ok := packetFields[n.Name]
			reads = reads || ok
		}
		return !calls
	})
	return calls || !reads
}
