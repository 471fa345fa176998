package output

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/skbtrace/skbtrace/codegen"
)

// bpftrace's layout, for scripts written for bpftrace, so that their
// output is bpftrace 0.26's line for line: at exit two newlines, then every
// map that holds data in name order; plain maps and stats one element a
// line with nothing between them, histograms as "@name[key]:", their
// bars, and an empty line. print() of a value prints the value alone, as
// bpftrace's print does, where the format is "bpftrace"; "bpftrace-events"
// keeps skbtrace's event line for print() (a .bt script with skbtrace's
// packet probes).

// bpftrace is the format of scripts written for bpftrace: lines as
// text's, print()'s values and the maps as bpftrace prints them; events
// is set where print() prints skbtrace's event line instead.
type bpftrace struct {
	text
	events bool
}

// Record prints print()'s value as bpftrace does: the value and a newline
// (several, a blank between them); or, with events, skbtrace's event line.
func (f bpftrace) Record(dst []byte, ev *codegen.Event, b []byte) []byte {
	if f.events || ev.Kind != codegen.EventPrint {
		return f.text.Record(dst, ev, b)
	}
	for i, a := range ev.Args {
		if i > 0 {
			dst = append(dst, ' ')
		}
		dst = f.p.fmt.appendValue(dst, a.Type, b[a.Offset:a.Offset+a.Size])
	}
	return append(dst, '\n')
}

// Maps prints every map at exit, as bpftrace does.
func (f bpftrace) Maps(w io.Writer, maps []MapData) error { return printMapsBpftrace(f.p.fmt, w, maps) }

// Map prints one map as bpftrace's print(@m) does.
func (f bpftrace) Map(w io.Writer, m MapData, view View) error {
	return printMapBpftrace(f.p.fmt, w, m, view)
}

// printMapsBpftrace prints every map at exit, as bpftrace does.
func printMapsBpftrace(f *Values, w io.Writer, maps []MapData) error {
	if _, err := io.WriteString(w, "\n\n"); err != nil {
		return err
	}
	byName := slices.SortedFunc(slices.Values(maps), func(a, b MapData) int { return strings.Compare(a.Layout.Name, b.Layout.Name) })
	for _, m := range byName {
		if err := printMapBpftrace(f, w, m, View{}); err != nil {
			return err
		}
	}
	return nil
}

// printMapBpftrace prints one map as bpftrace's print(@m) does (an empty
// one prints nothing); view is print(@m, top, div)'s.
func printMapBpftrace(f *Values, w io.Writer, m MapData, view View) error {
	if m.Absent {
		return nil
	}
	mi, entries := m.Layout, m.Entries
	name := mi.Name
	if mi.IsHist() {
		return printHistsBpftrace(w, mi, entries, view)
	}
	if mi.Kind == codegen.MapTseries {
		return printTseries(w, mi, entries)
	}
	entries = slices.DeleteFunc(entries, Unset(mi))
	sortEntries(f, mi, entries)
	for _, e := range view.entries(mi, entries) {
		if _, err := fmt.Fprintf(w, "@%s%s: %s\n", name, e.Key, f.formatEntry(mi, e)); err != nil {
			return err
		}
	}
	return nil
}

// printHistsBpftrace prints a histogram map as bpftrace does.
func printHistsBpftrace(w io.Writer, mi *codegen.MapLayout, entries []Entry, view View) error {
	name := mi.Name
	hists := histsByKey(entries)
	hs := histSpecOf(mi)
	keys, hists := view.hists(hists)
	byTotal(keys, hists)
	for _, k := range keys {
		fmt.Fprintf(w, "@%s%s:\n", name, k)
		printHist(w, hists[k], hs)
		if _, err := fmt.Fprintln(w); err != nil {
			return err
		}
	}
	return nil
}

// sortEntries orders a map's elements by value, as both layouts print them.
func sortEntries(f *Values, mi *codegen.MapLayout, entries []Entry) {
	sort.SliceStable(entries, func(i, j int) bool {
		if entries[i].Raw != nil && !InRegister(mi.Value) {
			return f.value(mi.Value, entries[i].Raw) < f.value(mi.Value, entries[j].Raw)
		}
		if entries[i].Value.N != entries[j].Value.N {
			return entries[i].Value.N < entries[j].Value.N
		}
		return entries[i].Key < entries[j].Key
	})
}

// byTotal orders a histogram map's keys as bpftrace prints them: by their
// counts added up, ascending (ties by key).
func byTotal(keys []string, hists map[string]histBuckets) {
	total := func(k string) int64 {
		var n int64
		for _, c := range hists[k] {
			n += c
		}
		return n
	}
	sort.SliceStable(keys, func(i, j int) bool { return total(keys[i]) < total(keys[j]) })
}
