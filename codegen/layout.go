package codegen

import (
	"math"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/lang/types"
)

// MapKind is what a script's map holds: an aggregation, or a plain value
// stored with =.
type MapKind uint8

// The kinds of maps.
const (
	MapValue MapKind = iota // a plain value: @m[k] = expr
	MapCount
	MapSum
	MapMin
	MapMax
	MapAvg
	MapStats
	MapHist
	MapLhist
	MapTseries
)

var mapKindNames = [...]string{MapValue: "value", MapCount: "count", MapSum: "sum", MapMin: "min", MapMax: "max",
	MapAvg: "avg", MapStats: "stats", MapHist: "hist", MapLhist: "lhist", MapTseries: "tseries"}

func (k MapKind) String() string { return mapKindNames[k] }

// aggKinds is the map kind of each aggregation.
var aggKinds = map[types.AggKind]MapKind{types.AggCount: MapCount, types.AggSum: MapSum, types.AggMin: MapMin,
	types.AggMax: MapMax, types.AggAvg: MapAvg, types.AggStats: MapStats, types.AggHist: MapHist, types.AggLhist: MapLhist,
	types.AggTseries: MapTseries}

// KeyField is one key of a map element, where it lies in the eBPF key.
type KeyField struct {
	// Name is the key's source text where the map is first assigned:
	// "reason" for @drops[reason, dev] (check.MapInfo.KeyNames).
	Name   string
	Type   types.Type
	Offset int
	Size   int
}

// PackedSlot is where a keyless aggregation lives when the script has
// more than packAbove of them: the element Index (a u64 key) of the
// per-CPU hash Map, which such maps of one value size share.
type PackedSlot struct {
	Map   string
	Index uint64
}

// MapLayout is everything needed to read and print one of the script's
// maps from the kernel: what the runtime knows of a map.
type MapLayout struct {
	// Name is the script's name without the @ ("" for @).
	Name string
	Kind MapKind
	// Keys are the script's keys in the eBPF key, in order; a
	// histogram's bucket index (a u64) follows them. KeySize is the
	// whole eBPF key's size.
	Keys    []KeyField
	KeySize int
	// Value is the value's type (types.Agg for aggregations); ValueSize
	// is one CPU's value's size in the map: 16 for min and max ([value,
	// set]) and avg and stats ([count, sum]), 8 for the other
	// aggregations.
	Value     types.Type
	ValueSize int
	// Slot is set where the map shares a kernel map with other keyless
	// aggregations; nil: it is the kernel map MapName(Name).
	Slot *PackedSlot
	// Lhist is an lhist map's min, max and step; nil for other kinds.
	Lhist *[3]int64
	// HistBits is hist(n, k)'s k: each power of two's range split in 2^k
	// buckets; 0 for hist(n) and other kinds.
	HistBits int
	// Tseries is a tseries map's interval (ns), number of intervals and
	// aggregation (stdlib.TseriesAggs); nil for other kinds.
	Tseries *[3]int64
	// Declared is the map type the script declares it with (let @m =
	// lruhash(N): hash, lruhash, percpuhash, percpulruhash, percpuarray),
	// MaxEntries the size it gives; "" and 0 where it is not declared.
	Declared   string
	MaxEntries int
}

// IsHist reports whether the map holds a histogram: its key then ends
// with the bucket index.
func (l *MapLayout) IsHist() bool { return l.Kind == MapHist || l.Kind == MapLhist }

// Indexed reports whether the map's key ends with an index after the
// script's keys: a histogram's bucket, a time series' interval slot.
func (l *MapLayout) Indexed() bool { return l.IsHist() || l.Kind == MapTseries }

// KernelMap is the name of the kernel map that holds the map.
func (l *MapLayout) KernelMap() string {
	if l.Slot != nil {
		return l.Slot.Map
	}
	return MapName(l.Name)
}

// Bucket is the range of values bucket i of a histogram counts, lo
// included and hi not: hist's [0, 1) for 0, [1, 2), [2, 4)... and lhist's
// steps. Open ends are math.MinInt64 and math.MaxInt64.
func (l *MapLayout) Bucket(i int64) (lo, hi int64) {
	if l.Lhist != nil {
		from, to, step := l.Lhist[0], l.Lhist[1], l.Lhist[2]
		switch last := (to-from+step-1)/step + 1; {
		case i <= 0:
			return math.MinInt64, from
		case i >= last:
			return to, math.MaxInt64
		}
		a := from + (i-1)*step
		return a, min(a+step, to)
	}
	if l.HistBits > 0 && i >= 2 {
		return HistBucket(i, int64(l.HistBits))
	}
	// bpftrace's buckets: negative, zero, one, then [2^(i-2), 2^(i-1)).
	switch {
	case i <= 0:
		return math.MinInt64, 0
	case i == 1:
		return 0, 1
	case i >= 65:
		return math.MaxInt64, math.MaxInt64
	case i == 64:
		return 1 << 62, math.MaxInt64
	}
	return 1 << (i - 2), 1 << (i - 1)
}

// Layout is the layout of the script map name (without the @), nil if
// the script has none of that name.
func (o *Output) Layout(name string) *MapLayout {
	if o.layouts != nil {
		return o.layouts[name]
	}
	for _, l := range o.MapLayouts {
		if l.Name == name {
			return l
		}
	}
	return nil
}

// mapLayouts lays out a checked script's maps, in the order they first
// appear (Info.MapOrder), keyless aggregations packed where there are many.
// It is the one place that reads the checker's maps.
func mapLayouts(info *check.Info) []*MapLayout {
	out := make([]*MapLayout, 0, len(info.MapOrder))
	for _, name := range info.MapOrder {
		mi := info.Maps[name]
		if mi == nil {
			continue
		}
		l := &MapLayout{Name: name, Kind: MapValue, Value: mi.Value}
		if d := info.MapDecls[name]; d != nil {
			l.Declared, l.MaxEntries = d.Type, int(d.Max)
		}
		if mi.Value.Kind == types.Agg {
			l.Kind = aggKinds[mi.Value.Agg]
		}
		for i, t := range mi.Keys {
			n := SlotSize(t)
			f := KeyField{Type: t, Offset: l.KeySize, Size: n}
			if i < len(mi.KeyNames) {
				f.Name = mi.KeyNames[i]
			}
			l.Keys = append(l.Keys, f)
			l.KeySize += n
		}
		if l.Indexed() {
			l.KeySize += 8
		}
		if l.KeySize == 0 {
			l.KeySize = 8
		}
		l.ValueSize = valueSize(l)
		out = append(out, l)
	}
	pack(out)
	return out
}

// valueSize is 16 for the aggregations that keep two numbers: min and max
// keep the value and whether it is set; avg and stats the count and the sum.
func valueSize(l *MapLayout) int {
	switch l.Kind {
	case MapMin, MapMax, MapAvg, MapStats:
		return 16
	case MapTseries:
		return tseriesValueSize
	case MapValue:
		return SlotSize(l.Value)
	}
	return 8
}

// HistBucket is the range of bucket i >= 2 of hist(n, k): the values 1
// to 2^k - 1 a bucket each (i - 1), then each power of two's range
// [2^j, 2^(j+1)) for j >= k split in 2^k buckets of 2^(j-k) values (the
// index codegen's bucket computes: 1 + 2^k*(j-k) + (v >> (j-k))).
func HistBucket(i, k int64) (lo, hi int64) {
	n := i - 1
	if n < 1<<k {
		return n, n + 1
	}
	g, s := n>>k, n&(1<<k-1)
	shift := g - 1 // j - k
	if shift >= 62-k {
		return math.MaxInt64, math.MaxInt64
	}
	lo = (1<<k + s) << shift
	return lo, lo + 1<<shift
}
