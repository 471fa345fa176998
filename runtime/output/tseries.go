package output

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/skbtrace/skbtrace/codegen"
)

// A tseries map's element is one interval slot of one key, per CPU
// [epoch, value, count, ns] (codegen/tseries.go): the CPUs that hold the
// slot's newest epoch are combined by the aggregation, the last value
// being the one recorded last.
func combineTseries(l *codegen.MapLayout, perCPU [][]byte) (epoch int64, a Agg) {
	u := func(b []byte, off int) int64 { return int64(binary.LittleEndian.Uint64(b[off:])) }
	agg := int64(0)
	if l.Tseries != nil {
		agg = l.Tseries[2]
	}
	epoch = -1
	for _, b := range perCPU {
		if u(b, 16) > 0 {
			epoch = max(epoch, u(b, 0))
		}
	}
	var last int64 = -1
	for _, b := range perCPU {
		if u(b, 16) == 0 || u(b, 0) != epoch {
			continue
		}
		v, n, at := u(b, 8), u(b, 16), u(b, 24)
		switch agg {
		case 2: // max
			if !a.Seen || v > a.N {
				a.N = v
			}
		case 3: // min
			if !a.Seen || v < a.N {
				a.N = v
			}
		case 1, 4: // avg, sum
			a.Sum += v
			a.Cnt += n
		default: // the last value
			if at > last {
				a.N, last = v, at
			}
		}
		a.Seen = true
	}
	switch agg {
	case 1:
		if a.Cnt > 0 {
			a.N = a.Sum / a.Cnt
		}
	case 4:
		a.N = a.Sum
	}
	return epoch, a
}

// tseriesPoints is one key's time series: each interval's epoch to its
// value.
type tseriesPoints map[int64]int64

// tseriesByKey gathers a tseries map's entries by key, and the newest
// epoch of any key: every key's rows end there.
func tseriesByKey(entries []Entry) (map[string]tseriesPoints, int64) {
	series := map[string]tseriesPoints{}
	newest := int64(math.MinInt64)
	for _, e := range entries {
		if !e.Value.Seen {
			continue
		}
		if series[e.Key] == nil {
			series[e.Key] = tseriesPoints{}
		}
		series[e.Key][e.Epoch] = e.Value.N
		newest = max(newest, e.Epoch)
	}
	return series, newest
}

// tseriesRows are the epochs a key prints: the map's last n intervals,
// from the first this key has a value in.
func tseriesRows(p tseriesPoints, newest, n int64) []int64 {
	var rows []int64
	for ep := newest - n + 1; ep <= newest; ep++ {
		if _, ok := p[ep]; ok || len(rows) > 0 {
			rows = append(rows, ep)
		}
	}
	return rows
}

// taiOffset is CLOCK_TAI's lead over the wall clock, in whole seconds
// (0 where the kernel was not told the leap seconds).
func taiOffset() time.Duration {
	var tai unix.Timespec
	if unix.ClockGettime(unix.CLOCK_TAI, &tai) != nil {
		return 0
	}
	d := time.Duration(tai.Nano() - time.Now().UnixNano())
	return d.Round(time.Second)
}

// tseriesClock is how the rows' times print, as bpftrace picks it: by the
// interval (whole seconds, milliseconds, microseconds), nanoseconds where
// there is one row.
func tseriesClock(interval int64, rows int) (label, layout string) {
	switch {
	case rows > 1 && interval%1e9 == 0:
		return "hh:mm:ss", "15:04:05"
	case rows > 1 && interval%1e6 == 0:
		return "hh:mm:ss.ms", "15:04:05.000"
	case rows > 1 && interval%1e3 == 0:
		return "hh:mm:ss.μs", "15:04:05.000000"
	}
	return "hh:mm:ss.ns", "15:04:05.000000000"
}

// tseriesWidth is the columns of the graph between the rows' time and
// value, the bars included: bpftrace's 53.
const tseriesWidth = 53

// printTseries prints a tseries map as bpftrace does: for each key its
// header, a row for each interval (its time, the value's place between
// the least and the greatest, the value or - where the interval has none)
// and the footer, then an empty line.
func printTseries(w io.Writer, mi *codegen.MapLayout, entries []Entry) error {
	series, newest := tseriesByKey(entries)
	interval, n := mi.Tseries[0], mi.Tseries[1]
	off := taiOffset()
	for _, k := range slices.Sorted(mapKeys(series)) {
		p := series[k]
		rows := tseriesRows(p, newest, n)
		lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
		for _, ep := range rows {
			if v, ok := p[ep]; ok {
				lo, hi = min(lo, v), max(hi, v)
			}
		}
		if lo == hi {
			lo, hi = lo-1, hi+1
		}
		label, layout := tseriesClock(interval, len(rows))
		width := len(layout)
		pad := strings.Repeat(" ", width+1)
		los, his := strconv.FormatInt(lo, 10), strconv.FormatInt(hi, 10)
		bounds := pad + los + strings.Repeat(" ", max(1, tseriesWidth-len(los)-len(his))) + his + "\n"
		rule := strings.Repeat("_", tseriesWidth-2)
		var b strings.Builder
		fmt.Fprintf(&b, "@%s%s:\n%s", mi.Name, k, bounds)
		b.WriteString(label + strings.Repeat(" ", max(1, width+1-len(label))) + "|" + rule + "|\n")
		place := func(v int64) int {
			return int(math.Floor(float64(v-lo) * float64(tseriesWidth-1) / float64(hi-lo)))
		}
		for _, ep := range rows {
			graph := []byte("|" + strings.Repeat(" ", tseriesWidth-2) + "|")
			if lo < 0 && hi > 0 {
				graph[place(0)] = '.'
			}
			value := "-"
			if v, ok := p[ep]; ok {
				graph[place(v)] = '*'
				value = strconv.FormatInt(v, 10)
			}
			at := time.Unix(0, ep*interval).Add(-off).Local()
			fmt.Fprintf(&b, "%s %s %s\n", at.Format(layout), graph, value)
		}
		b.WriteString(pad + "v" + rule + "v\n" + bounds + "\n")
		if _, err := io.WriteString(w, b.String()); err != nil {
			return err
		}
	}
	return nil
}

// appendTseriesJSON appends a tseries map as bpftrace's -f json prints
// it: {"type": "tseries", "data": {"@m": [{"interval_start": "...",
// "value": 1}, ...]}}, keyed maps by each key; intervals without a value
// are left out. Nothing where the map is empty.
func appendTseriesJSON(dst []byte, mi *codegen.MapLayout, entries []Entry) []byte {
	series, newest := tseriesByKey(entries)
	if len(series) == 0 {
		return dst
	}
	interval, n := mi.Tseries[0], mi.Tseries[1]
	off := taiOffset()
	points := func(dst []byte, p tseriesPoints) []byte {
		dst = append(dst, '[')
		first := true
		for _, ep := range tseriesRows(p, newest, n) {
			v, ok := p[ep]
			if !ok {
				continue
			}
			if !first {
				dst = append(dst, ',')
			}
			first = false
			at := time.Unix(0, ep*interval).Add(-off).Local()
			dst = append(dst, `{"interval_start":"`...)
			dst = at.AppendFormat(dst, "2006-01-02 15:04:05.000000000")
			dst = append(dst, `","value":`...)
			dst = strconv.AppendInt(dst, v, 10)
			dst = append(dst, '}')
		}
		return append(dst, ']')
	}
	dst = append(dst, `{"type": "tseries", "data": {`...)
	dst = appendBtJSONString(dst, "@"+mi.Name)
	dst = append(dst, ": "...)
	if len(mi.Keys) == 0 {
		for _, p := range series {
			dst = points(dst, p)
		}
	} else {
		dst = append(dst, '{')
		for i, k := range slices.Sorted(mapKeys(series)) {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = appendBtJSONString(dst, btJSONKey(k))
			dst = append(dst, ": "...)
			dst = points(dst, series[k])
		}
		dst = append(dst, '}')
	}
	return append(dst, "}}\n"...)
}

// mapKeys are a map's keys, for slices.Sorted.
func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
