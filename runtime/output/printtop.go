package output

import (
	"encoding/binary"
	"maps"
	"slices"
	"sort"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/lang/types"
)

// View is how bpftrace's print(@m, top, div) shows a map: only its top
// entries, the largest values, still in ascending order (0: all of them),
// and each value divided by div (0 or 1: as it is). Histograms keep the
// keys whose counts add up to the most, and divide each bucket's count.
// At exit and for print(@m) it is the zero view: the whole map.
type View struct{ Top, Div uint64 }

// entries applies the view to a map's entries, sorted as they print.
func (v View) entries(mi *codegen.MapLayout, entries []Entry) []Entry {
	if v.Top > 0 && uint64(len(entries)) > v.Top {
		entries = entries[uint64(len(entries))-v.Top:]
	}
	if v.Div <= 1 {
		return entries
	}
	out := make([]Entry, len(entries))
	for i, e := range entries {
		out[i] = v.divide(mi, e)
	}
	return out
}

// divide divides one entry's value: a count, sum, min, max or average, a
// stats' average and total (bpftrace leaves its count), a plain integer.
func (v View) divide(mi *codegen.MapLayout, e Entry) Entry {
	div := int64(v.Div)
	if e.Raw != nil {
		t := mi.Value
		if t.Kind != types.Int || t.Fmt != types.FmtDec || len(e.Raw) < 8 {
			return e
		}
		n := binary.LittleEndian.Uint64(e.Raw)
		if t.Signed {
			n = uint64(int64(n) / div)
		} else {
			n /= v.Div
		}
		e.Raw = binary.LittleEndian.AppendUint64(nil, n)
		return e
	}
	e.Value.N /= div
	if mi.Value.Agg == types.AggStats {
		e.Value.Sum /= div
	}
	return e
}

// hists applies the view to a map's histograms: the keys to print, in
// order, and the histograms with their counts divided.
func (v View) hists(hists map[string]histBuckets) ([]string, map[string]histBuckets) {
	keys := slices.Sorted(maps.Keys(hists))
	if v.Top > 0 {
		// bpftrace's order where it keeps the top: by each key's total.
		total := func(k string) int64 {
			var n int64
			for _, c := range hists[k] {
				n += c
			}
			return n
		}
		sort.SliceStable(keys, func(i, j int) bool { return total(keys[i]) < total(keys[j]) })
		if uint64(len(keys)) > v.Top {
			keys = keys[uint64(len(keys))-v.Top:]
		}
	}
	if v.Div <= 1 {
		return keys, hists
	}
	out := map[string]histBuckets{}
	for _, k := range keys {
		out[k] = histBuckets{}
		for b, c := range hists[k] {
			out[k][b] = c / int64(v.Div)
		}
	}
	return keys, out
}
