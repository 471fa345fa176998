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
// ratio, never a packet cut in two. What can cut one is the LRU: an skb
// that lives on while SampleEntries newer ones are decided (a socket's
// queue) is decided anew at its next hop. Clones and copies are skbs of
// their own, decided apart, as --filter sees them.
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
	// CappedEvents are the events --max-rate left out.
	CappedEvents uint64
	// LastSkb is the skb this CPU last found a --sample decision for,
	// LastKeep that decision (sampleKeep or sampleSkip): a cache.
	LastSkb, LastKeep uint64
}

// Offsets of OverheadValue's fields.
const (
	ovRateStart      = 0
	ovRateCount      = 8
	ovSampledEvents  = 16
	ovSampledPackets = 24
	ovKeptPackets    = 32
	ovCappedEvents   = 40
	ovLastSkb        = 48
	ovLastKeep       = 56
	ovSize           = 64
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

// sampleGate finds the skb's decision, makes it at its first sight
// (bpf_get_prandom_u32 below SampleRateMap's threshold), and returns where
// it says skip. The hops of a packet mostly run one after the other on
// one CPU: the CPU's OverheadValue keeps the last skb it found a decision
// for and the decision, so that those hops read the per-CPU array and not
// the hash. A decision never changes while its skb lives, so the cache
// cannot split a packet; the unsample helpers clear it on the CPU that
// frees the skb.
func (g *gen) sampleGate() error {
	g.maps.sampleMaps()
	g.maps.sampled = true
	m := g.frame.mark()
	defer g.frame.release(m)
	var key, val, cpuv int16
	for _, p := range []*int16{&key, &val, &cpuv} {
		off, err := g.frame.alloc(8)
		if err != nil {
			return err
		}
		*p = off
	}
	if err := g.skbPtr(); err != nil {
		return err
	}
	g.vs.pop(asm.R0)
	slow, decide, skip, kept, cache, nocache, pass := g.label("sample_slow"), g.label("sample_new"), g.label("sample_skip"),
		g.label("sample_kept"), g.label("sample_cache"), g.label("sample_nocache"), g.label("sample_pass")
	g.emit(asm.StoreMem(asm.RFP, key, asm.R0, asm.DWord), asm.StoreImm(asm.RFP, val, 0, asm.Word))
	g.lookup(OverheadMap, val)
	// This CPU's last skb: its decision without the hash.
	g.emit(
		asm.StoreMem(asm.RFP, cpuv, asm.R0, asm.DWord),
		asm.JEq.Imm(asm.R0, 0, slow),
		asm.LoadMem(asm.R1, asm.RFP, key, asm.DWord),
		asm.LoadMem(asm.R2, asm.R0, ovLastSkb, asm.DWord),
		asm.JNE.Reg(asm.R1, asm.R2, slow),
		asm.LoadMem(asm.R2, asm.R0, ovLastKeep, asm.DWord),
		asm.JEq.Imm(asm.R2, sampleKeep, pass),
		asm.LoadMem(asm.R1, asm.R0, ovSampledEvents, asm.DWord),
		asm.Add.Imm(asm.R1, 1),
		asm.StoreMem(asm.R0, ovSampledEvents, asm.R1, asm.DWord),
		asm.Ja.Label(exitLabel),
	)
	// The hash's, if it has one.
	g.mark(slow)
	g.lookup(SampleMap, key)
	g.emit(
		asm.JEq.Imm(asm.R0, 0, decide),
		asm.LoadMem(asm.R1, asm.R0, 0, asm.Word),
		asm.StoreMem(asm.RFP, val, asm.R1, asm.Word),
		asm.Ja.Label(cache),
	)
	// Else the decision, kept in the hash and counted.
	g.mark(decide)
	g.emit(asm.FnGetPrandomU32.Call(),
		asm.LoadMapValue(asm.R1, 0, 0).WithReference(SampleRateMap),
		asm.LoadMem(asm.R1, asm.R1, 0, asm.DWord),
		asm.StoreImm(asm.RFP, val, sampleSkip, asm.Word),
		asm.JGE.Reg(asm.R0, asm.R1, skip),
		asm.StoreImm(asm.RFP, val, sampleKeep, asm.Word),
	)
	g.mark(skip)
	g.updateFrom(SampleMap, key, asm.Mov.Reg(asm.R3, asm.RFP), asm.Add.Imm(asm.R3, int32(val)))
	g.emit(
		asm.LoadMem(asm.R0, asm.RFP, cpuv, asm.DWord),
		asm.JEq.Imm(asm.R0, 0, nocache),
		asm.LoadMem(asm.R1, asm.RFP, val, asm.Word),
		asm.JEq.Imm(asm.R1, sampleKeep, kept),
		asm.LoadMem(asm.R1, asm.R0, ovSampledPackets, asm.DWord),
		asm.Add.Imm(asm.R1, 1),
		asm.StoreMem(asm.R0, ovSampledPackets, asm.R1, asm.DWord),
		asm.Ja.Label(cache),
		asm.LoadMem(asm.R1, asm.R0, ovKeptPackets, asm.DWord).WithSymbol(kept),
		asm.Add.Imm(asm.R1, 1),
		asm.StoreMem(asm.R0, ovKeptPackets, asm.R1, asm.DWord),
	)
	// This CPU remembers the skb and its decision, then acts on it.
	g.emit(
		asm.LoadMem(asm.R0, asm.RFP, cpuv, asm.DWord).WithSymbol(cache),
		asm.LoadMem(asm.R2, asm.RFP, val, asm.Word),
		asm.JEq.Imm(asm.R0, 0, nocache),
		asm.LoadMem(asm.R1, asm.RFP, key, asm.DWord),
		asm.StoreMem(asm.R0, ovLastSkb, asm.R1, asm.DWord),
		asm.StoreMem(asm.R0, ovLastKeep, asm.R2, asm.DWord),
		asm.JEq.Imm(asm.R2, sampleKeep, pass),
		asm.LoadMem(asm.R1, asm.R0, ovSampledEvents, asm.DWord),
		asm.Add.Imm(asm.R1, 1),
		asm.StoreMem(asm.R0, ovSampledEvents, asm.R1, asm.DWord),
		asm.Ja.Label(exitLabel),
	)
	g.mark(nocache)
	g.emit(
		asm.LoadMem(asm.R2, asm.RFP, val, asm.Word),
		asm.JNE.Imm(asm.R2, sampleKeep, exitLabel),
	)
	g.mark(pass)
	return nil
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
		// args[0] is the skb, for both; this CPU's cache forgets it too.
		return asm.Instructions{
			asm.LoadMem(asm.R6, asm.R1, 0, asm.DWord),
			asm.StoreMem(asm.RFP, -8, asm.R6, asm.DWord),
			asm.LoadMapPtr(asm.R1, 0).WithReference(SampleMap),
			asm.Mov.Reg(asm.R2, asm.RFP),
			asm.Add.Imm(asm.R2, -8),
			asm.FnMapDeleteElem.Call(),
			asm.StoreImm(asm.RFP, -16, 0, asm.Word),
			asm.LoadMapPtr(asm.R1, 0).WithReference(OverheadMap),
			asm.Mov.Reg(asm.R2, asm.RFP),
			asm.Add.Imm(asm.R2, -16),
			asm.FnMapLookupElem.Call(),
			asm.JEq.Imm(asm.R0, 0, "done"),
			asm.LoadMem(asm.R1, asm.R0, ovLastSkb, asm.DWord),
			asm.JNE.Reg(asm.R1, asm.R6, "done"),
			asm.Mov.Imm(asm.R1, 0),
			asm.StoreMem(asm.R0, ovLastSkb, asm.R1, asm.DWord),
			asm.Mov.Imm(asm.R0, 0).WithSymbol("done"),
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
