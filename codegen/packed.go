package codegen

// packAbove is how many keyless aggregations a script may have before they
// share maps: the kernel lets one program use at most 64 maps, and 200
// `@mN = count()` in one probe must load.
const packAbove = 16

// pack gives each keyless aggregation its Slot when the script has more
// than packAbove of them: an element of the per-CPU hash that every such
// map of the same value size shares (count and sum in one, min, max, avg
// and stats in another).
func pack(layouts []*MapLayout) {
	var packable []*MapLayout
	for _, l := range layouts {
		if len(l.Keys) == 0 && l.Kind != MapValue && !l.Indexed() && l.Declared == "" {
			packable = append(packable, l)
		}
	}
	if len(packable) <= packAbove {
		return
	}
	var n8, n16 uint64
	for _, l := range packable {
		if l.ValueSize == 16 {
			l.Slot = &PackedSlot{"keyless16", n16}
			n16++
		} else {
			l.Slot = &PackedSlot{"keyless8", n8}
			n8++
		}
	}
}
