package runtime

import (
	"encoding/binary"
	"maps"
	"slices"
	"sort"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/lang/types"
)

// mapView is how bpftrace's print(@m, top, div) shows a map: only its top
// entries, the largest values, still in ascending order (0: all of them),
// and each value divided by div (0 or 1: as it is). Histograms keep the
// keys whose counts add up to the most, and divide each bucket's count.
// At exit and for print(@m) it is the zero view: the whole map.
type mapView struct{ top, div uint64 }

// entries applies the view to a map's entries, sorted as they print.
func (v mapView) entries(mi *codegen.MapLayout, entries []mapEntry) []mapEntry {
	if v.top > 0 && uint64(len(entries)) > v.top {
		entries = entries[uint64(len(entries))-v.top:]
	}
	if v.div <= 1 {
		return entries
	}
	out := make([]mapEntry, len(entries))
	for i, e := range entries {
		out[i] = v.divide(mi, e)
	}
	return out
}

// divide divides one entry's value: a count, sum, min, max or average, a
// stats' average and total (bpftrace leaves its count), a plain integer.
func (v mapView) divide(mi *codegen.MapLayout, e mapEntry) mapEntry {
	div := int64(v.div)
	if e.raw != nil {
		t := mi.Value
		if t.Kind != types.Int || t.Fmt != types.FmtDec || len(e.raw) < 8 {
			return e
		}
		n := binary.LittleEndian.Uint64(e.raw)
		if t.Signed {
			n = uint64(int64(n) / div)
		} else {
			n /= v.div
		}
		e.raw = binary.LittleEndian.AppendUint64(nil, n)
		return e
	}
	e.value.n /= div
	if mi.Value.Agg == types.AggStats {
		e.value.sum /= div
	}
	return e
}

// hists applies the view to a map's histograms: the keys to print, in
// order, and the histograms with their counts divided.
func (v mapView) hists(hists map[string]histBuckets) ([]string, map[string]histBuckets) {
	keys := slices.Sorted(maps.Keys(hists))
	if v.top > 0 {
		// bpftrace's order where it keeps the top: by each key's total.
		total := func(k string) int64 {
			var n int64
			for _, c := range hists[k] {
				n += c
			}
			return n
		}
		sort.SliceStable(keys, func(i, j int) bool { return total(keys[i]) < total(keys[j]) })
		if uint64(len(keys)) > v.top {
			keys = keys[uint64(len(keys))-v.top:]
		}
	}
	if v.div <= 1 {
		return keys, hists
	}
	out := map[string]histBuckets{}
	for _, k := range keys {
		out[k] = histBuckets{}
		for b, c := range hists[k] {
			out[k][b] = c / int64(v.div)
		}
	}
	return keys, out
}
