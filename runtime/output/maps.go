package output

import (
	"encoding/binary"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/lang/types"
)

// MapData is one map as the session read it from the kernel, handed over
// to be printed.
type MapData struct {
	Layout  *codegen.MapLayout
	Entries []Entry
	// Absent is a map the kernel does not hold (nothing to read).
	Absent bool
}

// Entry is one decoded map element.
type Entry struct {
	Key string // the script's keys, formatted: [udp, 9]
	// Keys are the keys formatted each, IDs without their names
	// (Values.Entry's parts).
	Keys   []string
	Value  Agg
	Bucket int64 // for histograms, the bucket index; a tseries' slot
	Epoch  int64 // for a tseries, the interval's number
	// Raw is a plain (not aggregated) value's bytes.
	Raw []byte
}

// Entry decodes a map element read from the kernel: keys formatted by
// their types (with parts, also each alone, without names), per-CPU values combined by
// the aggregation, a plain value's bytes kept (copied: readers reuse
// their buffers).
func (f *Values) Entry(l *codegen.MapLayout, key []byte, perCPU [][]byte, parts bool) Entry {
	var e Entry
	if l.Kind == codegen.MapTseries {
		e.Epoch, e.Value = combineTseries(l, perCPU)
	} else {
		e.Value = combine(l.Value, perCPU)
	}
	e.Key, e.Keys = f.formatKey(l, key, parts)
	if l.Value.Kind != types.Agg {
		e.Raw = slices.Clone(perCPU[0])
	}
	if l.Indexed() {
		e.Bucket = int64(binary.LittleEndian.Uint64(key[len(key)-8:]))
	}
	return e
}

// formatKey renders the script's keys of a map element as the printer
// prints them, names and all: [udp, 9]; with parts, also each key alone as
// its ID, with no name (what a consumer such as a metric's label keys by:
// a name learnt later does not change it).
func (f *Values) formatKey(l *codegen.MapLayout, key []byte, parts bool) (string, []string) {
	if len(l.Keys) == 0 {
		return "", nil
	}
	var out []string
	if parts {
		out = make([]string, len(l.Keys))
	}
	whole := []byte{'['}
	for i, p := range l.Keys {
		raw := key[p.Offset : p.Offset+p.Size]
		if i > 0 {
			whole = append(whole, ", "...)
		}
		if p.Type.Kind == types.Tuple && p.Type.Fmt == types.FmtRule {
			// The rule's label, not whydrop's lines (rulelabel.go).
			s := f.ruleLabel(p.Type, raw)
			whole = append(whole, s...)
			if parts {
				out[i] = s
			}
			continue
		}
		whole = f.appendNamed(whole, p.Type, raw)
		if parts {
			out[i] = f.value(p.Type, raw)
		}
	}
	return string(append(whole, ']')), out
}

// Unset reports, for a min or max map, the elements no CPU has set a
// value in: printed as absent.
func Unset(l *codegen.MapLayout) func(Entry) bool {
	return func(e Entry) bool {
		return (l.Kind == codegen.MapMin || l.Kind == codegen.MapMax) && !e.Value.Seen
	}
}

// InRegister reports whether a plain map value is a number, which sorts
// by value; strings and addresses sort by their text.
func InRegister(t types.Type) bool { return t.Kind == types.Int || t.Kind == types.Ptr }

// valueType is how a map's value prints: aggregations as signed numbers.
func valueType(t types.Type) types.Type {
	if t.Kind == types.Agg {
		return types.S64
	}
	return t
}

// printMaps prints every map that holds data, in the order given (the
// script's), a blank line between them: the text and JSON formats' maps
// at exit.
func printMaps(f *Values, w io.Writer, maps []MapData, json bool) error {
	first := true
	for _, m := range maps {
		printed, err := printMap(f, w, m, first, View{}, json)
		if err != nil {
			return err
		}
		first = first && !printed
	}
	return nil
}

// printMap prints one map: `@name[key]: value` sorted by value, after a
// blank line unless it is the first output, or one JSON object; it
// reports whether it printed anything. view is print(@m, top, div)'s.
func printMap(f *Values, w io.Writer, m MapData, first bool, view View, json bool) (bool, error) {
	mi, entries := m.Layout, m.Entries
	if len(entries) == 0 {
		return false, nil
	}
	if mi.IsHist() {
		return true, printHists(w, mi, entries, first, view, json)
	}
	if mi.Kind == codegen.MapTseries {
		if json {
			_, err := w.Write(appendTseriesJSON(nil, mi, entries))
			return true, err
		}
		if !first {
			fmt.Fprintln(w)
		}
		return true, printTseries(w, mi, entries)
	}
	entries = slices.DeleteFunc(entries, Unset(mi))
	sortEntries(f, mi, entries)
	entries = view.entries(mi, entries)
	name := mi.Name
	if json {
		var data any = f.jsonEntry(mi, entries[0])
		if len(mi.Keys) > 0 {
			byKey := map[string]any{}
			for _, e := range entries {
				byKey[strings.Trim(e.Key, "[]")] = f.jsonEntry(mi, e)
			}
			data = byKey
		}
		_, err := fmt.Fprint(w, jsonLine(map[string]any{"type": "map", "data": map[string]any{"@" + name: data}}))
		return true, err
	}
	if !first {
		fmt.Fprintln(w)
	}
	for _, e := range entries {
		if _, err := fmt.Fprintf(w, "@%s%s: %s\n", name, e.Key, f.formatEntry(mi, e)); err != nil {
			return true, err
		}
	}
	return true, nil
}

// jsonEntry is an element's value as JSON shows it.
func (f *Values) jsonEntry(mi *codegen.MapLayout, e Entry) any {
	a := e.Value
	if e.Raw != nil {
		return f.jsonValue(mi.Value, e.Raw)
	}
	if mi.Value.Kind == types.Agg && mi.Value.Agg == types.AggStats {
		return map[string]int64{"count": a.Cnt, "average": a.N, "total": a.Sum}
	}
	if mi.Value.Kind == types.Agg || mi.Value.Fmt == types.FmtDec {
		return a.N
	}
	return f.formatAgg(mi, a)
}

// printHists prints a histogram map: one histogram for each key.
func printHists(w io.Writer, mi *codegen.MapLayout, entries []Entry, first bool, view View, json bool) error {
	name := mi.Name
	hists := histsByKey(entries)
	hs := histSpecOf(mi)
	keys, hists := view.hists(hists)
	if json {
		data := map[string]any{}
		for _, k := range keys {
			var buckets []map[string]any
			for _, i := range slices.Sorted(maps.Keys(hists[k])) {
				buckets = append(buckets, map[string]any{"bucket": histLabel(i, hs), "count": hists[k][i]})
			}
			data[strings.Trim(k, "[]")] = buckets
		}
		_, err := fmt.Fprint(w, jsonLine(map[string]any{"type": "hist", "data": map[string]any{"@" + name: data}}))
		return err
	}
	for i, k := range keys {
		if !first || i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "@%s%s:\n", name, k)
		printHist(w, hists[k], hs)
	}
	return nil
}

// histsByKey gathers a histogram map's entries: each key's buckets and
// their counts (a per-CPU map's entries for one bucket added up).
func histsByKey(entries []Entry) map[string]histBuckets {
	hists := map[string]histBuckets{}
	for _, e := range entries {
		if hists[e.Key] == nil {
			hists[e.Key] = histBuckets{}
		}
		hists[e.Key][e.Bucket] += e.Value.N
	}
	return hists
}
