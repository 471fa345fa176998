package output

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/lang/types"
)

// bpftrace's layout, for scripts written for bpftrace (.bt files), so that
// their output is the same line for line: at exit two newlines, then every
// map in name order; plain maps one element a line with nothing between
// them (an empty map is an empty line), histograms and stats each followed
// by an empty line, "@name: " with its space before a histogram.

// bpftrace is the format of scripts written for bpftrace: records and
// lines as text's, maps in bpftrace's layout.
type bpftrace struct{ text }

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

// printMapBpftrace prints one map as bpftrace's print(@m) does; view
// is print(@m, top, div)'s.
func printMapBpftrace(f *Values, w io.Writer, m MapData, view View) error {
	if m.Absent {
		return nil
	}
	mi, entries := m.Layout, m.Entries
	name := mi.Name
	if mi.IsHist() {
		return printHistsBpftrace(w, mi, entries, view)
	}
	entries = slices.DeleteFunc(entries, Unset(mi))
	if len(entries) == 0 {
		_, err := fmt.Fprintln(w)
		return err
	}
	sortEntries(f, mi, entries)
	for _, e := range view.entries(mi, entries) {
		if _, err := fmt.Fprintf(w, "@%s%s: %s\n", name, e.Key, f.formatEntry(mi, e)); err != nil {
			return err
		}
	}
	if mi.Value.Kind == types.Agg && mi.Value.Agg == types.AggStats {
		_, err := fmt.Fprintln(w)
		return err
	}
	return nil
}

// printHistsBpftrace prints a histogram map as bpftrace does.
func printHistsBpftrace(w io.Writer, mi *codegen.MapLayout, entries []Entry, view View) error {
	name := mi.Name
	hists := histsByKey(entries)
	if len(hists) == 0 {
		_, err := fmt.Fprintln(w)
		return err
	}
	lhist := mi.Lhist
	keys, hists := view.hists(hists)
	for _, k := range keys {
		fmt.Fprintf(w, "@%s%s: \n", name, k)
		printHist(w, hists[k], lhist)
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
