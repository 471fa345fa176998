package output

import (
	"encoding/binary"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/lang/types"
)

// bpftraceJSON is -f json for scripts written for bpftrace: bpftrace
// 0.26's schema, one object a line, spaced as bpftrace spaces it:
//
//	{"type": "value", "data": 5}                  print(5)
//	{"type": "printf", "data": "x\n"}             printf, and cat, join, time
//	{"type": "map", "data": {"@m": {"a": 2}}}     a map: "stats" for avg and stats,
//	{"type": "hist", "data": {"@h": [{"min": 16, "max": 31, "count": 1}]}}
//
// Keys of several parts are joined by commas ("1,x"); arrays are unspaced
// ([1,"a"]), objects spaced; an integer a double cannot hold exactly is a
// string.
type bpftraceJSON struct{ p *Printer }

// Record appends print()'s value: {"type": "value", "data": ...}.
func (f bpftraceJSON) Record(dst []byte, ev *codegen.Event, b []byte) []byte {
	dst = append(dst, `{"type": "value", "data": `...)
	switch len(ev.Args) {
	case 1:
		a := ev.Args[0]
		dst = f.p.fmt.appendBtJSON(dst, a.Type, b[a.Offset:a.Offset+a.Size])
	default:
		// Several values (skbtrace's print(a, b)): an array of them.
		dst = append(dst, '[')
		for i, a := range ev.Args {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = f.p.fmt.appendBtJSON(dst, a.Type, b[a.Offset:a.Offset+a.Size])
		}
		dst = append(dst, ']')
	}
	return append(dst, "}\n"...)
}

// btLineTypes are the "type" of each kind of line.
var btLineTypes = [...]string{LinePrintf: "printf", LineCat: "cat", LineJoin: "join", LineTime: "time"}

// Line appends {"type": kind, "data": text}; join's text with its newline,
// as bpftrace's join prints it.
func (bpftraceJSON) Line(dst []byte, kind LineKind, s []byte) []byte {
	dst = append(dst, `{"type": "`...)
	dst = append(dst, btLineTypes[kind]...)
	dst = append(dst, `", "data": `...)
	dst = appendBtJSONString(dst, s)
	return append(dst, "}\n"...)
}

// Flush has no blocks to print.
func (bpftraceJSON) Flush(dst []byte, _ time.Time, _ bool) []byte { return dst }

// Deadline is never: nothing waits.
func (bpftraceJSON) Deadline() time.Time { return time.Time{} }

// Maps prints every map that holds data at exit, in name order, one
// object each.
func (f bpftraceJSON) Maps(w io.Writer, ms []MapData) error {
	byName := slices.SortedFunc(slices.Values(ms), func(a, b MapData) int { return strings.Compare(a.Layout.Name, b.Layout.Name) })
	for _, m := range byName {
		if err := f.Map(w, m, View{}); err != nil {
			return err
		}
	}
	return nil
}

// Map prints one map as one object; an empty map prints nothing.
func (f bpftraceJSON) Map(w io.Writer, m MapData, view View) error {
	if m.Absent {
		return nil
	}
	line := f.p.fmt.appendBtJSONMap(nil, m, view)
	if line == nil {
		return nil
	}
	_, err := w.Write(line)
	return err
}

// appendBtJSONMap appends one map's line, or nothing where it is empty.
func (f *Values) appendBtJSONMap(dst []byte, m MapData, view View) []byte {
	mi, entries := m.Layout, m.Entries
	if mi.Kind == codegen.MapTseries {
		return appendTseriesJSON(dst, mi, entries)
	}
	typ := "map"
	if mi.IsHist() {
		typ = "hist"
	} else if mi.Value.Kind == types.Agg && (mi.Value.Agg == types.AggStats || mi.Value.Agg == types.AggAvg) {
		typ = "stats"
	}
	start := len(dst)
	dst = append(dst, `{"type": "`+typ+`", "data": {`...)
	dst = appendBtJSONString(dst, "@"+mi.Name)
	dst = append(dst, ": "...)
	if mi.IsHist() {
		keys, hists := view.hists(histsByKey(entries))
		byTotal(keys, hists)
		if len(keys) == 0 {
			return dst[:start]
		}
		if len(mi.Keys) == 0 {
			dst = appendBtJSONHist(dst, hists[keys[0]], histSpecOf(mi))
		} else {
			dst = append(dst, '{')
			for i, k := range keys {
				if i > 0 {
					dst = append(dst, ", "...)
				}
				dst = appendBtJSONString(dst, btJSONKey(k))
				dst = append(dst, ": "...)
				dst = appendBtJSONHist(dst, hists[k], histSpecOf(mi))
			}
			dst = append(dst, '}')
		}
		return append(dst, "}}\n"...)
	}
	entries = slices.DeleteFunc(slices.Clone(entries), Unset(mi))
	if len(entries) == 0 {
		return dst[:start]
	}
	sortEntries(f, mi, entries)
	entries = view.entries(mi, entries)
	if len(mi.Keys) == 0 {
		dst = f.appendBtJSONEntry(dst, mi, entries[0])
	} else {
		dst = append(dst, '{')
		for i, e := range entries {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = appendBtJSONString(dst, btJSONKey(e.Key))
			dst = append(dst, ": "...)
			dst = f.appendBtJSONEntry(dst, mi, e)
		}
		dst = append(dst, '}')
	}
	return append(dst, "}}\n"...)
}

// btJSONKey is a map element's keys as bpftrace's JSON names them: the
// text without its brackets and blanks ("[1, x]" is "1,x").
func btJSONKey(key string) string {
	return strings.ReplaceAll(strings.TrimSuffix(strings.TrimPrefix(key, "["), "]"), " ", "")
}

// appendBtJSONEntry appends an element's value: stats as an object, other
// aggregations as numbers, a plain value by its type.
func (f *Values) appendBtJSONEntry(dst []byte, mi *codegen.MapLayout, e Entry) []byte {
	if e.Raw != nil {
		return f.appendBtJSON(dst, mi.Value, e.Raw)
	}
	a := e.Value
	if mi.Value.Agg == types.AggStats {
		dst = appendBtJSONInt(append(dst, `{"count": `...), a.Cnt)
		dst = appendBtJSONInt(append(dst, `, "average": `...), a.N)
		dst = appendBtJSONInt(append(dst, `, "total": `...), a.Sum)
		return append(dst, '}')
	}
	return appendBtJSONInt(dst, a.N)
}

// appendBtJSONHist appends one histogram: its buckets from the first to
// the last that counted, each {"min": lo, "max": hi, "count": n} with the
// bounds inclusive (no "min" below the lowest, no "max" above the top).
func appendBtJSONHist(dst []byte, h histBuckets, hs histSpec) []byte {
	var idx []int64
	for _, i := range slices.Sorted(maps.Keys(h)) {
		if h[i] != 0 {
			idx = append(idx, i)
		}
	}
	dst = append(dst, '[')
	if len(idx) > 0 {
		for i := idx[0]; i <= idx[len(idx)-1]; i++ {
			if i > idx[0] {
				dst = append(dst, ',')
			}
			dst = append(dst, '{')
			lo, hi, hasLo, hasHi := histBounds(i, hs)
			if hasLo {
				dst = appendBtJSONInt(append(dst, `"min": `...), lo)
				dst = append(dst, ", "...)
			}
			if hasHi {
				dst = appendBtJSONInt(append(dst, `"max": `...), hi)
				dst = append(dst, ", "...)
			}
			dst = strconv.AppendInt(append(dst, `"count": `...), h[i], 10)
			dst = append(dst, '}')
		}
	}
	return append(dst, ']')
}

// histBounds is bucket i's inclusive bounds: hist's powers of two, or
// lhist's steps; the lowest bucket has no lower bound, lhist's top none
// above.
func histBounds(i int64, hs histSpec) (lo, hi int64, hasLo, hasHi bool) {
	if hs.bits > 0 && i >= 2 {
		lo, hi := codegen.HistBucket(i, hs.bits)
		return lo, hi - 1, true, true
	}
	if lhist := hs.lhist; lhist != nil {
		min0, max0, step := lhist[0], lhist[1], lhist[2]
		last := (max0-min0+step-1)/step + 1
		switch {
		case i == 0:
			return 0, min0 - 1, false, true
		case i == last:
			return max0, 0, true, false
		}
		a := min0 + (i-1)*step
		return a, min(a+step, max0) - 1, true, true
	}
	switch i {
	case 0:
		return 0, -1, false, true
	case 1:
		return 0, 0, true, true
	case 2:
		return 1, 1, true, true
	}
	return int64(1) << (i - 2), int64(1)<<(i-1) - 1, true, true
}

// appendBtJSONInt appends an integer as bpftrace's JSON does: a number
// where a double holds it exactly, else a string.
func appendBtJSONInt(dst []byte, v int64) []byte {
	if int64(float64(v)) != v || v == math.MinInt64 {
		return strconv.AppendQuote(dst, strconv.FormatInt(v, 10))
	}
	return strconv.AppendInt(dst, v, 10)
}

// appendBtJSONUint is appendBtJSONInt for an unsigned integer.
func appendBtJSONUint(dst []byte, v uint64) []byte {
	if f := float64(v); f >= math.MaxUint64 || uint64(f) != v {
		return strconv.AppendQuote(dst, strconv.FormatUint(v, 10))
	}
	return strconv.AppendUint(dst, v, 10)
}

// appendBtJSON appends a value as bpftrace's JSON shows it: integers and
// booleans as such (an enum's number, not its name), tuples as unspaced
// arrays, records as objects, stacks as arrays of frames, the rest as
// strings of their text.
func (f *Values) appendBtJSON(dst []byte, t types.Type, raw []byte) []byte {
	if t.Kind == types.Array {
		if out, ok := appendArray(dst, t, raw, true); ok {
			return out
		}
	}
	if t.Kind == types.Struct {
		return btfFormat{json: true}.append(dst, t.BTF, raw, 0)
	}
	switch {
	case t.Kind == types.Tuple:
		parts := codegen.TupleLayout(t)
		open, close, sep := byte('['), byte(']'), ","
		if t.IsRecord() {
			open, close, sep = '{', '}', ", "
		}
		dst = append(dst, open)
		for i, p := range parts {
			if i > 0 {
				dst = append(dst, sep...)
			}
			if t.IsRecord() {
				dst = appendBtJSONString(dst, t.Tuple.Names[i])
				dst = append(dst, ": "...)
			}
			dst = f.appendBtJSON(dst, p.Type, raw[p.Offset:p.Offset+p.Size])
		}
		return append(dst, close)
	case t.Kind == types.Stack:
		dst = append(dst, '[')
		for i, fr := range f.stackOf(t, raw) {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendBtJSONString(dst, fr)
		}
		return append(dst, ']')
	case t.Kind == types.Int && t.Fmt == types.FmtBool:
		return strconv.AppendBool(dst, binary.LittleEndian.Uint64(raw) != 0)
	case t.Kind == types.Int && (t.Fmt == types.FmtDec || t.Fmt == types.FmtEnum || jsonNumber(t)) || t.Kind == types.Ptr:
		v := binary.LittleEndian.Uint64(raw)
		if t.Signed {
			return appendBtJSONInt(dst, int64(v))
		}
		return appendBtJSONUint(dst, v)
	}
	return appendBtJSONString(dst, f.appendValue(nil, t, raw))
}

// appendBtJSONString quotes a string as bpftrace's JSON does: ", \ and the
// control characters escaped (\n, \r, \t, else \u00XX), every other byte
// as it is.
func appendBtJSONString[S ~string | ~[]byte](dst []byte, s S) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c == '\r':
			dst = append(dst, '\\', 'r')
		case c == '\t':
			dst = append(dst, '\\', 't')
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}
