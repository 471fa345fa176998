package codegen

import (
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
	packable := func(mi *check.MapInfo) bool {
		return mi != nil && len(mi.Keys) == 0 && mi.Value.Kind == types.Agg && !IsHist(mi)
	}
	if !packable(info.Maps[name]) {
		return "", 0, false
	}
	var n int
	for _, m := range info.MapOrder {
		if packable(info.Maps[m]) {
			n++
		}
	}
	if n <= packAbove {
		return "", 0, false
	}
	size := valueSize(info.Maps[name])
	for _, m := range info.MapOrder {
		if m == name {
			break
		}
		if mi := info.Maps[m]; packable(mi) && valueSize(mi) == size {
			index++
		}
	}
	if size == 16 {
		return "keyless16", index, true
	}
	return "keyless8", index, true
}
