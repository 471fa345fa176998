package codegen

import "github.com/cilium/ebpf"

// declared gives a map the script declares (let @m = lruhash(N)) its
// size, and, where it holds values, the LRU type asked for. Aggregations
// stay per-CPU hashes of that size whatever the declaration: the runtime
// combines the CPUs of a per-CPU hash; an LRU's eviction is not kept
// for them (percpulruhash and lruhash of count() evict nothing, and
// drop updates when full, as any full map of skbtrace does).
func declared(s *ebpf.MapSpec, l *MapLayout) {
	if l.Declared == "" {
		return
	}
	if l.MaxEntries > 0 {
		s.MaxEntries = uint32(l.MaxEntries)
	}
	if s.Type == ebpf.Hash && (l.Declared == "lruhash" || l.Declared == "percpulruhash") {
		s.Type = ebpf.LRUHash
	}
}
