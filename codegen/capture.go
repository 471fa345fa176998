package codegen

import (
	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/lang"
)

// CaptureMap is the per-CPU scratch a capture() record is built in: its
// header and up to the snap length of packet bytes, too big for the stack.
const CaptureMap = "capture"

// A capture record starts as print's (id, time, CPU, skb, function), then
// holds the fields below, 8 bytes each, the device name, and the packet.
const (
	CaptureMark    = 40
	CaptureNetns   = 48
	CaptureIfindex = 56
	// CaptureOrigLen is the packet's length from its link header.
	CaptureOrigLen = 64
	// CaptureLen is how many bytes of the packet follow the header.
	CaptureLen = 72
	// CaptureSynth is 0, or 0x10000 | the Ethernet type where the skb had
	// no link header: the first 14 bytes are then to be replaced by a
	// synthesized Ethernet header of that type; with CaptureTagged set as
	// well, the first 12 and the type at 16, after the VLAN tag.
	CaptureSynth = 80
	// CaptureTagged is set in CaptureSynth where the frame holds an
	// out-of-band VLAN tag at bytes 12 to 15.
	CaptureTagged = 0x20000
	CaptureDev    = 88
	// CapturePacket is the skb's logical packet (packet.go) in a script
	// that calls track(), else 0.
	CapturePacket = 104
	// CaptureHead is the size of the header; the packet follows.
	CaptureHead = 112
)

// maxPerfSnaplen keeps a capture record within a perf record, whose size
// is 16 bits with its headers.
const maxPerfSnaplen = 0xffff - 0x100 - CaptureHead

// maxPerCPUValue is the largest value of a per-CPU map.
const maxPerCPUValue = 32768

// DefaultSnaplen is how many bytes of each packet -w keeps by default;
// MaxSnaplen is what a snap length of 0 ("the whole packet") means.
const (
	DefaultSnaplen = 256
	MaxSnaplen     = 65535
)

// capture compiles capture(): the packet from its link header, up to the
// snap length, linear part and paged fragments, with the skb's facts, as one record.
func (g *gen) capture(c *lang.CallExpr) error {
	ev := &Event{ID: len(g.out.Events), Kind: EventCapture, Size: CaptureHead, Probe: g.spec.Spec.Name + g.target.Name}
	snap := g.maps.snaplen
	// Room for the fragments: a copy's start and length are each bounded
	// by the snap length, and the verifier adds the bounds.
	size := CaptureHead + snap + 4 // an out-of-band VLAN tag's 4 bytes
	if g.info.Frags != nil && g.maps.pageMul != 0 {
		size += snap
	}
	// Per-CPU values are limited to 32 KiB: larger, one entry per CPU of
	// an array, indexed by the CPU's number.
	perCPU := size <= maxPerCPUValue
	if _, ok := g.maps.specs[CaptureMap]; !ok {
		spec := &ebpf.MapSpec{Name: CaptureMap, Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: uint32(size), MaxEntries: 1}
		if !perCPU {
			spec.Type, spec.MaxEntries = ebpf.Array, uint32(g.maps.cpus)
		}
		g.maps.specs[CaptureMap] = spec
	}
	g.maps.eventMaps()
	skip := g.label("capture_skip")
	if err := g.parsePacket(skip); err != nil {
		return err
	}
	rec, err := g.frame.alloc(CaptureHead)
	if err != nil {
		return err
	}
	if err := g.printHead(ev, rec); err != nil {
		return err
	}
	if g.trk != 0 && g.head == nil {
		g.emit(asm.LoadMem(asm.R0, asm.RFP, g.trk, asm.DWord), asm.StoreMem(asm.RFP, rec+CapturePacket, asm.R0, asm.DWord))
	} else {
		g.emit(zero8(rec + CapturePacket)...)
	}
	fields := g.info.Capture[c]
	for i, at := range []int16{CaptureMark, CaptureNetns, CaptureIfindex, CaptureDev} {
		size := 8
		if at == CaptureDev {
			size = 16
		}
		if err := g.into(fields[i], rec+at, size); err != nil {
			return err
		}
	}
	sl := *g.pkt
	g.packetLens(int32(snap))
	g.emit(
		asm.StoreMem(asm.RFP, rec+CaptureOrigLen, asm.R2, asm.DWord),
		asm.StoreMem(asm.RFP, rec+CaptureLen, asm.R1, asm.DWord),
		asm.LoadMem(asm.R1, asm.RFP, sl.synth, asm.DWord),
		asm.StoreMem(asm.RFP, rec+CaptureSynth, asm.R1, asm.DWord),
	)
	// The scratch record: header copied from the frame, then the bytes.
	g.emit(zero8(sl.tmp)...)
	if !perCPU {
		g.emit(asm.FnGetSmpProcessorId.Call(), asm.StoreMem(asm.RFP, sl.tmp, asm.R0, asm.Word))
	}
	g.lookup(CaptureMap, sl.tmp)
	g.emit(asm.JEq.Imm(asm.R0, 0, skip))
	for off := int16(0); off < CaptureHead; off += 8 {
		g.emit(asm.LoadMem(asm.R1, asm.RFP, rec+off, asm.DWord), asm.StoreMem(asm.R0, off, asm.R1, asm.DWord))
	}
	g.emit(
		asm.StoreMem(asm.RFP, sl.tmp, asm.R0, asm.DWord),
		asm.Mov.Reg(asm.R1, asm.R0),
		asm.Add.Imm(asm.R1, CaptureHead),
	)
	g.tagShift(asm.R1)
	g.emit(
		asm.LoadMem(asm.R2, asm.RFP, rec+CaptureLen, asm.DWord),
		asm.JGT.Imm(asm.R2, int32(snap), skip),
		asm.LoadMem(asm.R3, asm.RFP, sl.base, asm.DWord),
		asm.FnProbeReadKernel.Call(),
	)
	if err := g.captureFrags(sl, rec, snap); err != nil {
		return err
	}
	g.captureTag(rec, snap)
	g.submitWith(func(data, size asm.Register) {
		g.emit(
			asm.LoadMem(data, asm.RFP, sl.tmp, asm.DWord),
			asm.LoadMem(size, asm.RFP, rec+CaptureLen, asm.DWord),
			asm.JGT.Imm(size, int32(snap), skip),
			asm.Add.Imm(size, CaptureHead),
		)
	})
	g.mark(skip)
	g.out.Events = append(g.out.Events, ev)
	return nil
}

// A pkt value: the synthesized-header flag (as CaptureSynth), the packet's
// length and how many of its bytes follow, 4 bytes each, padding, then the
// first PacketBytes bytes from the link header: enough for tcpdump's
// one-line decode of Ethernet, VLAN, IPv6 and TCP headers, and of such a
// packet in VXLAN or Geneve (with options) over IPv6.
const (
	PacketSynth   = 0
	PacketOrigLen = 4
	PacketLen     = 8
	PacketData    = 16
	PacketBytes   = 184
	PacketSize    = PacketData + PacketBytes
)

// packetInto writes pkt into the zeroed slot at.
func (g *gen) packetInto(at int16) error {
	done := g.label("pkt_done")
	if err := g.parsePacket(done); err != nil {
		return err
	}
	sl := *g.pkt
	g.emit(
		asm.LoadMem(asm.R0, asm.RFP, sl.synth, asm.DWord),
		asm.StoreMem(asm.RFP, at+PacketSynth, asm.R0, asm.Word),
	)
	g.packetLens(PacketBytes)
	g.emit(
		asm.StoreMem(asm.RFP, at+PacketOrigLen, asm.R2, asm.Word),
		asm.StoreMem(asm.RFP, at+PacketLen, asm.R1, asm.Word),
		asm.Mov.Reg(asm.R2, asm.R1),
		asm.Mov.Reg(asm.R1, asm.RFP),
		asm.Add.Imm(asm.R1, int32(at+PacketData)),
		asm.JGT.Imm(asm.R2, PacketBytes, done),
		asm.LoadMem(asm.R3, asm.RFP, sl.base, asm.DWord),
		asm.FnProbeReadKernel.Call(),
	)
	g.mark(done)
	return nil
}

// packetLens puts in R1 how many bytes of the parsed packet can be read,
// at most limit (min(linear, length, limit), at least 0), and in R2 its
// length (at least 0).
func (g *gen) packetLens(limit int32) {
	sl := *g.pkt
	flen, lin, lim, pos := g.label("flen"), g.label("lin"), g.label("lim"), g.label("pos")
	g.emit(
		asm.LoadMem(asm.R1, asm.RFP, sl.lin, asm.DWord),
		asm.LoadMem(asm.R2, asm.RFP, sl.flen, asm.DWord),
		asm.JSGE.Imm(asm.R2, 0, flen),
		asm.Mov.Imm(asm.R2, 0),
		asm.JSLE.Reg(asm.R1, asm.R2, lin).WithSymbol(flen),
		asm.Mov.Reg(asm.R1, asm.R2),
		asm.JSLE.Imm(asm.R1, limit, lim).WithSymbol(lin),
		asm.Mov.Imm(asm.R1, limit),
		asm.JSGE.Imm(asm.R1, 0, pos).WithSymbol(lim),
		asm.Mov.Imm(asm.R1, 0),
	)
	g.mark(pos)
}
