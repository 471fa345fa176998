package output

import (
	"encoding/binary"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/lang/types"
)

// Agg combines one key's per-CPU values into what the map prints.
type Agg struct {
	N    int64 // the number: count, sum, min, max, average
	Cnt  int64 // avg and stats: how many values
	Sum  int64 // avg and stats: their total
	Seen bool  // min/max: some CPU holds a value
}

// combine adds up a key's per-CPU values according to the aggregation.
func combine(t types.Type, perCPU [][]byte) Agg {
	var a Agg
	u := func(b []byte, off int) int64 { return int64(binary.LittleEndian.Uint64(b[off:])) }
	for _, b := range perCPU {
		switch t.Agg {
		case types.AggMin, types.AggMax:
			if u(b, 8) == 0 {
				continue
			}
			v := u(b, 0)
			if !a.Seen || (t.Agg == types.AggMin && v < a.N) || (t.Agg == types.AggMax && v > a.N) {
				a.N = v
			}
			a.Seen = true
		case types.AggAvg, types.AggStats:
			a.Cnt += u(b, 0)
			a.Sum += u(b, 8)
		default:
			a.N += u(b, 0)
		}
	}
	if a.Cnt > 0 {
		a.N = a.Sum / a.Cnt
	}
	return a
}

// histBuckets is one histogram: bucket index to count.
type histBuckets map[int64]int64

// histLabel names bucket i: hist's power-of-two ranges, or lhist's steps.
func histLabel(i int64, lhist *[3]int64) string {
	if lhist != nil {
		lo, hi, step := lhist[0], lhist[1], lhist[2]
		last := (hi-lo+step-1)/step + 1
		switch {
		case i == 0:
			return fmt.Sprintf("(..., %d)", lo)
		case i == last:
			return fmt.Sprintf("[%d, ...)", hi)
		}
		a := lo + (i-1)*step
		if step == 1 {
			return fmt.Sprintf("[%d]", a) // one value, as bpftrace labels it
		}
		return fmt.Sprintf("[%d, %d)", a, min(a+step, hi))
	}
	// bpftrace's buckets: negative, zero, one, then [2^(i-2), 2^(i-1)).
	switch i {
	case 0:
		return "(..., 0)"
	case 1:
		return "[0]"
	case 2:
		return "[1]"
	}
	return fmt.Sprintf("[%s, %s)", sizeSuffix(int64(1)<<(i-2)), sizeSuffix(int64(1)<<(i-1)))
}

// sizeSuffix writes powers of 1024 as bpftrace does: 1K, 4M.
func sizeSuffix(v int64) string {
	for _, s := range []struct {
		n    int64
		unit string
	}{{1 << 60, "E"}, {1 << 50, "P"}, {1 << 40, "T"}, {1 << 30, "G"}, {1 << 20, "M"}, {1 << 10, "K"}} {
		if v >= s.n && v%s.n == 0 {
			return fmt.Sprintf("%d%s", v/s.n, s.unit)
		}
	}
	return fmt.Sprint(v)
}

// printHist prints a histogram in bpftrace's layout: label, count, and a bar
// 52 columns wide at the largest bucket, from the first to the last bucket
// that counted something (none where zero() emptied them all).
func printHist(w io.Writer, h histBuckets, lhist *[3]int64) {
	var idx []int64
	var top int64
	for i, c := range h {
		if c != 0 { // zero(@h)'s buckets bound nothing, as in bpftrace
			idx = append(idx, i)
		}
		top = max(top, c)
	}
	if len(idx) == 0 {
		return
	}
	sort.Slice(idx, func(a, b int) bool { return idx[a] < idx[b] })
	for i := idx[0]; i <= idx[len(idx)-1]; i++ {
		c := h[i]
		bar := 0
		if top > 0 {
			bar = int(c * 52 / top)
		}
		fmt.Fprintf(w, "%-16s%8d |%s%s|\n", histLabel(i, lhist), c, strings.Repeat("@", bar), strings.Repeat(" ", 52-bar))
	}
}

// formatEntry renders a map element's value: a plain value by its type, an
// aggregation as formatAgg does.
func (f *Values) formatEntry(mi *codegen.MapLayout, e Entry) string {
	if e.Raw != nil {
		return f.value(mi.Value, e.Raw)
	}
	return f.formatAgg(mi, e.Value)
}

// formatAgg renders a combined value: stats as bpftrace 0.26's record,
// { .count = 2, .average = 6, .total = 12 }.
func (f *Values) formatAgg(mi *codegen.MapLayout, a Agg) string {
	if mi.Value.Kind == types.Agg && mi.Value.Agg == types.AggStats {
		return fmt.Sprintf("{ .count = %d, .average = %d, .total = %d }", a.Cnt, a.N, a.Sum)
	}
	return f.formatInt(uint64(a.N), valueType(mi.Value))
}
