package codegen

import (
	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// declared gives a map the script declares (let @m = lruhash(N)) its
// size, and the LRU type asked for: a hash of values an LRU hash, of
// aggregations (per-CPU, which the runtime combines) a per-CPU LRU hash.
func declared(s *ebpf.MapSpec, l *MapLayout) {
	if l.Declared == "" {
		return
	}
	if l.MaxEntries > 0 {
		s.MaxEntries = uint32(l.MaxEntries)
	}
	if l.Declared == "lruhash" || l.Declared == "percpulruhash" {
		switch s.Type {
		case ebpf.Hash:
			s.Type = ebpf.LRUHash
		case ebpf.PerCPUHash:
			s.Type = ebpf.LRUCPUHash
		}
	}
}

// PerCPU reports whether a map of type t holds a value per CPU, which
// the runtime combines (an aggregation's map, LRU or not).
func PerCPU(t ebpf.MapType) bool {
	return t == ebpf.PerCPUHash || t == ebpf.LRUCPUHash || t == ebpf.PerCPUArray
}

// MapFullWarning is bpftrace's warning where a map is full and an update
// fails.
const MapFullWarning = "WARNING: Map full; can't update element"

// mapFullWarning follows a bpf_map_update_elem on a map the script
// declares (whose size it chose) with bpftrace's warning where the update
// failed: an undeclared map's failures are counted as skbtrace counts
// every map's, silently to the program.
func (g *gen) mapFullWarning(kernelMap string) {
	declared := false
	for _, l := range g.maps.layouts {
		if l.KernelMap() == kernelMap && l.Declared != "" {
			declared = true
		}
	}
	if !declared {
		return
	}
	ok := g.label("updated")
	g.emit(asm.JSGE.Imm(asm.R0, 0, ok))
	if err := g.warning(MapFullWarning + "\n"); err != nil {
		// No room for the record: the update's failure goes unsaid.
		g.mark(ok)
		return
	}
	g.mark(ok)
}
