package runtime

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

// printMapsBpftrace prints every map at exit, as bpftrace does.
func (s *Session) printMapsBpftrace(w io.Writer) error {
	if _, err := io.WriteString(w, "\n\n"); err != nil {
		return err
	}
	byName := slices.SortedFunc(slices.Values(s.out.MapLayouts), func(a, b *codegen.MapLayout) int { return strings.Compare(a.Name, b.Name) })
	for _, l := range byName {
		if err := s.printMapBpftrace(w, l.Name, mapView{}); err != nil {
			return err
		}
	}
	return nil
}

// printMapBpftrace prints one map as bpftrace's print(@m) does; view
// is print(@m, top, div)'s.
func (s *Session) printMapBpftrace(w io.Writer, name string, view mapView) error {
	mi := s.out.Layout(name)
	if mi == nil {
		return nil
	}
	if m, _ := s.scriptMap(mi); m == nil {
		return nil
	}
	entries, err := s.readMap(mi)
	if err != nil {
		return err
	}
	if mi.IsHist() {
		return s.printHistsBpftrace(w, mi, entries, view)
	}
	entries = slices.DeleteFunc(entries, unset(mi))
	if len(entries) == 0 {
		_, err := fmt.Fprintln(w)
		return err
	}
	sortEntries(s, mi, entries)
	for _, e := range view.entries(mi, entries) {
		if _, err := fmt.Fprintf(w, "@%s%s: %s\n", name, e.key, s.formatEntry(mi, e)); err != nil {
			return err
		}
	}
	if mi.Value.Kind == types.Agg && mi.Value.Agg == types.AggStats {
		_, err = fmt.Fprintln(w)
	}
	return err
}

func (s *Session) printHistsBpftrace(w io.Writer, mi *codegen.MapLayout, entries []mapEntry, view mapView) error {
	name := mi.Name
	hists := map[string]histBuckets{}
	for _, e := range entries {
		if hists[e.key] == nil {
			hists[e.key] = histBuckets{}
		}
		hists[e.key][e.bucket] += e.value.n
	}
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
func sortEntries(s *Session, mi *codegen.MapLayout, entries []mapEntry) {
	sort.SliceStable(entries, func(i, j int) bool {
		if entries[i].raw != nil && !inRegister(mi.Value) {
			return s.fmt.value(mi.Value, entries[i].raw) < s.fmt.value(mi.Value, entries[j].raw)
		}
		if entries[i].value.n != entries[j].value.n {
			return entries[i].value.n < entries[j].value.n
		}
		return entries[i].key < entries[j].key
	})
}
