package codegen

import (
	"sync"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/lang/types"
)

// packAbove is how many keyless aggregations a script may have before they
// share maps: the kernel lets one program use at most 64 maps, and 200
// `@mN = count()` in one probe must load.
const packAbove = 16

// Packed reports where a keyless aggregation lives when the script has
// more than packAbove of them: the element of key index in the per-CPU
// hash phys, which every such map of the same value size shares (count
// and sum in one, min, max, avg and stats in another). Codegen and the
// runtime both ask it, so they agree without passing anything.
func Packed(info *check.Info, name string) (phys string, index uint64, ok bool) {
	p, ok := packing(info)[name]
	return p.phys, p.index, ok
}

type packedSlot struct {
	phys  string
	index uint64
}

// packCache keeps the last script's layout: codegen asks for each
// aggregation it writes, and a script of thousands of them must not walk
// its maps each time.
var packCache struct {
	sync.Mutex
	info  *check.Info
	n     int
	slots map[string]packedSlot
}

// packing lays out a script's keyless aggregations, once per script.
func packing(info *check.Info) map[string]packedSlot {
	packCache.Lock()
	defer packCache.Unlock()
	if packCache.info == info && packCache.n == len(info.MapOrder) {
		return packCache.slots
	}
	packable := func(mi *check.MapInfo) bool {
		return mi != nil && len(mi.Keys) == 0 && mi.Value.Kind == types.Agg && !IsHist(mi)
	}
	var names []string
	for _, m := range info.MapOrder {
		if packable(info.Maps[m]) {
			names = append(names, m)
		}
	}
	slots := map[string]packedSlot{}
	if len(names) > packAbove {
		var n8, n16 uint64
		for _, m := range names {
			if valueSize(info.Maps[m]) == 16 {
				slots[m] = packedSlot{"keyless16", n16}
				n16++
			} else {
				slots[m] = packedSlot{"keyless8", n8}
				n8++
			}
		}
	}
	packCache.info, packCache.n, packCache.slots = info, len(info.MapOrder), slots
	return slots
}
