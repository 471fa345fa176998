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

// histSpec is what a histogram's buckets are: lhist's bounds, or hist's
// bits (hist(n, k): 2^k buckets a power of two; 0 is hist(n)'s).
type histSpec struct {
	lhist *[3]int64
	bits  int64
}

// histSpecOf is a histogram map's buckets.
func histSpecOf(l *codegen.MapLayout) histSpec { return histSpec{l.Lhist, int64(l.HistBits)} }

// histLabel names bucket i: hist's power-of-two ranges (split in 2^k
// with hist(n, k): [8, 10)), or lhist's steps.
func histLabel(i int64, hs histSpec) string {
	if hs.bits > 0 && i >= 2 {
		lo, hi := codegen.HistBucket(i, hs.bits)
		if hi-lo == 1 {
			return fmt.Sprintf("[%s]", bitsSuffix(lo, hs.bits))
		}
		return fmt.Sprintf("[%s, %s)", bitsSuffix(lo, hs.bits), bitsSuffix(hi, hs.bits))
	}
	if lhist := hs.lhist; lhist != nil {
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

// bitsSuffix writes hist(n, k)'s bounds as bpftrace does: in the
// largest unit of 1024 that divides v at least 2^k times (k = 1: 2K,
// 1024K, 2M; k = 5: 2048, 2016K), which for k = 0 is sizeSuffix's.
func bitsSuffix(v, k int64) string {
	for _, u := range []struct {
		n    int64
		unit string
	}{{1 << 60, "E"}, {1 << 50, "P"}, {1 << 40, "T"}, {1 << 30, "G"}, {1 << 20, "M"}, {1 << 10, "K"}} {
		if v%u.n == 0 && v/u.n >= 1<<k {
			return fmt.Sprintf("%d%s", v/u.n, u.unit)
		}
	}
	return fmt.Sprint(v)
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
func printHist(w io.Writer, h histBuckets, hs histSpec) {
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
		fmt.Fprintf(w, "%-16s%8d |%s%s|\n", histLabel(i, hs), c, strings.Repeat("@", bar), strings.Repeat(" ", 52-bar))
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
