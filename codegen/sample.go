package codegen

import (
	"encoding/binary"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// --sample N keeps one packet in N. The decision is made once per skb, at
// the first event whose predicate it passes, and kept in SampleMap under
// the skb's address: every later hop of that skb finds it there, so a
// packet's hops are kept all or none. A hash of the packet's headers would
// need no map, but its headers are not there at every hop (a socket's skb
// before its IP header is pushed, a tunnel's before and after), nor the
// same (NAT, TTL): hops of one packet would be decided apart. The address
// is the skb's for its whole life; what it misses is a new skb at a freed
// one's address, which the unsample helpers handle by forgetting the skb
// once it is freed (unsampleHelpers). Where a free goes by none of them,
// the next skb at that address inherits the decision, whole: a bias of the
// ratio, never a packet cut in two. Clones and copies are skbs of their
// own, decided apart, as --filter sees them.
const (
	// SampleMap is the LRU hash of decisions: key the skb's address, value
	// sampleKeep or sampleSkip (u32).
	SampleMap = "sampled"
	// SampleRateMap is a one-entry array holding the threshold (u64) a
	// random u32 must be below for a new skb to be kept:
	// SampleThreshold(N). The runtime raises N by writing it (--max-overhead).
	SampleRateMap = "sample_rate"
	// OverheadMap is a one-entry per-CPU array of OverheadValue: the rate
	// cap's window and what the gates took out.
	OverheadMap = "overhead"
	// HelperUnsample forgets a sampled skb at the end of its life, an
	// fexit program on the functions that free its struct;
	// HelperUnsampleFree on the kfree_skb and consume_skb tracepoints,
	// where fexit is refused (unsampleHelpers). Both are attached after
	// the script's own programs.
	HelperUnsample     = "unsample"
	HelperUnsampleFree = "unsample_free"
)

// SampleEntries bounds SampleMap: the skbs alive at once that a decision
// is kept for. The least recently seen go first.
const SampleEntries = 65536

const (
	sampleKeep = 1
	sampleSkip = 2
)

// OverheadValue is OverheadMap's value on each CPU.
type OverheadValue struct {
	// RateStart is when the rate cap's one-second window began
	// (bpf_ktime_get_ns), RateCount the events let through in it.
	RateStart, RateCount uint64
	// SampledEvents are the events --sample took out; SampledPackets the
	// skbs it decided to skip, KeptPackets those it decided to keep.
	SampledEvents, SampledPackets, KeptPackets uint64
	// CappedEvents are the events --max-rate took out.
	CappedEvents uint64
}

// Offsets of OverheadValue's fields.
const (
	ovRateStart      = 0
	ovRateCount      = 8
	ovSampledEvents  = 16
	ovSampledPackets = 24
	ovKeptPackets    = 32
	ovCappedEvents   = 40
	ovSize           = 48
)

// SampleThreshold is SampleRateMap's value for one packet in n: a random
// u32 is below it with probability 1/n (n 1: always).
func SampleThreshold(n uint32) uint64 {
	if n == 0 {
		n = 1
	}
	return (uint64(1) << 32) / uint64(n)
}

// sampleMaps adds the maps the gates use, SampleRateMap holding n's
// threshold.
func (ms *mapSet) sampleMaps() {
	if _, ok := ms.specs[SampleMap]; ok {
		return
	}
	ms.specs[SampleMap] = &ebpf.MapSpec{Name: SampleMap, Type: ebpf.LRUHash, KeySize: 8, ValueSize: 4, MaxEntries: SampleEntries}
	ms.specs[SampleRateMap] = &ebpf.MapSpec{Name: SampleRateMap, Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: 1,
		Contents: []ebpf.MapKV{{Key: uint32(0), Value: binary.NativeEndian.AppendUint64(nil, SampleThreshold(ms.sample))}}}
	ms.overheadMap()
}

func (ms *mapSet) overheadMap() {
	if _, ok := ms.specs[OverheadMap]; !ok {
		ms.specs[OverheadMap] = &ebpf.MapSpec{Name: OverheadMap, Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: ovSize, MaxEntries: 1}
	}
}

// overheadGates go between the predicate and the body of a program the
// kernel runs on events: --sample's on those with an skb, then
// --max-rate's. Events they take out return at once, counted.
func (g *gen) overheadGates() error {
	if g.maps.sample > 0 && g.hasSkb() {
		if err := g.sampleGate(); err != nil {
			return err
		}
	}
	if g.maps.maxRate > 0 {
		return g.rateGate()
	}
	return nil
}

// sampleGate looks up the skb's decision, makes it at its first sight
// (bpf_get_prandom_u32 below SampleRateMap's threshold), and returns where
// it says skip.
func (g *gen) sampleGate() error {
	g.maps.sampleMaps()
	g.maps.sampled = true
	m := g.frame.mark()
	defer g.frame.release(m)
	key, err := g.frame.alloc(8)
	if err != nil {
		return err
	}
	val, err := g.frame.alloc(8)
	if err != nil {
		return err
	}
	if err := g.skbPtr(); err != nil {
		return err
	}
	g.vs.pop(asm.R0)
	decide, skip, pass := g.label("sample_new"), g.label("sample_skip"), g.label("sample_pass")
	g.emit(asm.StoreMem(asm.RFP, key, asm.R0, asm.DWord))
	g.lookup(SampleMap, key)
	g.emit(
		asm.JEq.Imm(asm.R0, 0, decide),
		asm.LoadMem(asm.R1, asm.R0, 0, asm.Word),
		asm.JEq.Imm(asm.R1, sampleKeep, pass),
	)
	g.countOverhead(val, ovSampledEvents)
	g.emit(asm.Ja.Label(exitLabel))
	g.mark(decide)
	g.emit(asm.FnGetPrandomU32.Call(),
		asm.LoadMapValue(asm.R1, 0, 0).WithReference(SampleRateMap),
		asm.LoadMem(asm.R1, asm.R1, 0, asm.DWord),
		asm.JGE.Reg(asm.R0, asm.R1, skip),
		asm.StoreImm(asm.RFP, val, sampleKeep, asm.Word),
	)
	g.updateFrom(SampleMap, key, asm.Mov.Reg(asm.R3, asm.RFP), asm.Add.Imm(asm.R3, int32(val)))
	g.countOverhead(val, ovKeptPackets)
	g.emit(asm.Ja.Label(pass))
	g.mark(skip)
	g.emit(asm.StoreImm(asm.RFP, val, sampleSkip, asm.Word))
	g.updateFrom(SampleMap, key, asm.Mov.Reg(asm.R3, asm.RFP), asm.Add.Imm(asm.R3, int32(val)))
	g.countOverhead(val, ovSampledPackets, ovSampledEvents)
	g.emit(asm.Ja.Label(exitLabel))
	g.mark(pass)
	return nil
}

// countOverhead adds one to each OverheadValue field at offs on this CPU,
// with one lookup; slot is a free stack slot for the map's key.
func (g *gen) countOverhead(slot int16, offs ...int16) {
	g.maps.overheadMap()
	done := g.label("ov_done")
	g.emit(
		asm.LoadMapPtr(asm.R1, 0).WithReference(OverheadMap),
		asm.StoreImm(asm.RFP, slot, 0, asm.Word),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, int32(slot)),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, done),
	)
	for _, off := range offs {
		g.emit(
			asm.LoadMem(asm.R1, asm.R0, off, asm.DWord),
			asm.Add.Imm(asm.R1, 1),
			asm.StoreMem(asm.R0, off, asm.R1, asm.DWord),
		)
	}
	g.mark(done)
}

// unsampleEnds are the functions that end an skb's life, after every
// function that takes it: an fexit program there forgets it once no hop
// of it is left. The free tracepoints come earlier (skb_release_data and
// kfree_skbmem, hops of the packet on the function backends, follow), so
// they are used only where fexit is refused, where skb: probes fall back
// to tracepoints and have no hops after them.
var unsampleEnds = []string{"kfree_skbmem", "napi_skb_cache_put"}

// unsampleHelpers builds the programs that forget a sampled skb where it
// is freed, so that the next skb at its address is decided anew: fexit
// programs on unsampleEnds (HelperUnsample), and tp_btf programs on the
// free tracepoints (HelperUnsampleFree), which the runtime attaches where
// none of the first did.
func unsampleHelpers(out *Output) {
	forget := func() asm.Instructions {
		// args[0] is the skb, for both.
		return asm.Instructions{
			asm.LoadMem(asm.R6, asm.R1, 0, asm.DWord),
			asm.StoreMem(asm.RFP, -8, asm.R6, asm.DWord),
			asm.LoadMapPtr(asm.R1, 0).WithReference(SampleMap),
			asm.Mov.Reg(asm.R2, asm.RFP),
			asm.Add.Imm(asm.R2, -8),
			asm.FnMapDeleteElem.Call(),
			asm.Mov.Imm(asm.R0, 0),
			asm.Return(),
		}
	}
	for _, fn := range unsampleEnds {
		name := "unsample_" + fn
		out.Programs = append(out.Programs, &Program{Name: name, SkbArg: -1, Helper: HelperUnsample,
			Attach: Attach{Kind: AttachFexit, Text: "--sample", Func: fn},
			Prog:   &ebpf.ProgramSpec{Name: name, License: "GPL", Type: ebpf.Tracing, AttachType: ebpf.AttachTraceFExit, AttachTo: fn, Instructions: forget()}})
	}
	for _, tp := range freeTracepoints {
		name := "unsample_" + tp
		out.Programs = append(out.Programs, &Program{Name: name, SkbArg: -1, Helper: HelperUnsampleFree, Tracepoint: tp,
			Attach: Attach{Kind: AttachTpBTF, Text: "--sample", Name: tp},
			Prog:   &ebpf.ProgramSpec{Name: name, License: "GPL", Type: ebpf.Tracing, AttachType: ebpf.AttachTraceRawTp, AttachTo: tp, Instructions: forget()}})
	}
}
