package runtime

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"

	"strings"

	"github.com/cilium/ebpf"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/lang/types"
)

// mapEntry is one decoded map element.
type mapEntry struct {
	key string // the script's keys, formatted: [udp, 9]
	// keys are the keys formatted each (readMapWith's parts).
	keys   []string
	value  aggValue
	bucket int64 // for histograms, the bucket index
	// raw is a plain (not aggregated) value's bytes.
	raw []byte
}

// readMap decodes a map's elements: keys formatted by their types, per-CPU
// values combined by the aggregation.
func (s *Session) readMap(l *codegen.MapLayout) ([]mapEntry, error) {
	return s.readMapWith(s.fmt, l, false)
}

// readMapWith is readMap formatting with f; with parts, each entry also
// has its keys formatted each.
func (s *Session) readMapWith(f *formatter, l *codegen.MapLayout, parts bool) ([]mapEntry, error) {
	m, packedKey := s.scriptMap(l)
	if m == nil {
		return nil, nil
	}
	entry := func(key []byte, perCPU [][]byte) mapEntry {
		e := mapEntry{value: combine(l.Value, perCPU)}
		e.key, e.keys = f.formatKey(l, key, parts)
		if l.Value.Kind != types.Agg {
			// The reader reads every value into the same buffer.
			e.raw = slices.Clone(perCPU[0])
		}
		if l.IsHist() {
			e.bucket = int64(binary.LittleEndian.Uint64(key[len(key)-8:]))
		}
		return e
	}
	if packedKey != nil {
		var many [][]byte
		if err := m.Lookup(packedKey, &many); errors.Is(err, ebpf.ErrKeyNotExist) {
			return nil, nil
		} else if err != nil {
			return nil, fmt.Errorf("read @%s: %w", l.Name, err)
		}
		return []mapEntry{entry(packedKey, many)}, nil
	}
	var out []mapEntry
	err := walkMap(m, func(key []byte, perCPU [][]byte) {
		out = append(out, entry(key, perCPU))
	})
	if err != nil {
		return nil, fmt.Errorf("read @%s: %w", l.Name, err)
	}
	return out, nil
}

// PrintMaps prints every map that holds data, in bpftrace's layout:
// `@name[key]: value`, sorted by value, maps in the order the script names them.
func (s *Session) PrintMaps(w io.Writer) error {
	if s.bpftrace && !s.json {
		return s.printMapsBpftrace(w)
	}
	first := true
	for _, l := range s.out.MapLayouts {
		printed, err := s.printMap(w, l.Name, first, mapView{})
		if err != nil {
			return err
		}
		first = first && !printed
	}
	return nil
}

// printMap prints one map, after a blank line unless it is the first output;
// it reports whether it printed anything. view is print(@m, top, div)'s.
func (s *Session) printMap(w io.Writer, name string, first bool, view mapView) (bool, error) {
	mi := s.out.Layout(name)
	if mi == nil {
		return false, nil
	}
	entries, err := s.readMap(mi)
	if err != nil || len(entries) == 0 {
		return false, err
	}
	if mi.IsHist() {
		return true, s.printHists(w, mi, entries, first, view)
	}
	entries = slices.DeleteFunc(entries, unset(mi))
	sortEntries(s, mi, entries)
	entries = view.entries(mi, entries)
	if s.json {
		var data any = s.jsonValue(mi, entries[0])
		if len(mi.Keys) > 0 {
			byKey := map[string]any{}
			for _, e := range entries {
				byKey[strings.Trim(e.key, "[]")] = s.jsonValue(mi, e)
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
		if _, err := fmt.Fprintf(w, "@%s%s: %s\n", name, e.key, s.formatEntry(mi, e)); err != nil {
			return true, err
		}
	}
	return true, nil
}

// inRegister reports whether a plain map value is a number, which sorts
// by value; strings and addresses sort by their text.
func inRegister(t types.Type) bool { return t.Kind == types.Int || t.Kind == types.Ptr }

func (s *Session) jsonValue(mi *codegen.MapLayout, e mapEntry) any {
	a := e.value
	if e.raw != nil {
		return s.fmt.jsonValue(mi.Value, e.raw)
	}
	if mi.Value.Kind == types.Agg && mi.Value.Agg == types.AggStats {
		return map[string]int64{"count": a.cnt, "average": a.n, "total": a.sum}
	}
	if mi.Value.Kind == types.Agg || mi.Value.Fmt == types.FmtDec {
		return a.n
	}
	return s.formatAgg(mi, a)
}

// printHists prints a histogram map: one histogram for each key.
func (s *Session) printHists(w io.Writer, mi *codegen.MapLayout, entries []mapEntry, first bool, view mapView) error {
	name := mi.Name
	hists := map[string]histBuckets{}
	for _, e := range entries {
		if hists[e.key] == nil {
			hists[e.key] = histBuckets{}
		}
		hists[e.key][e.bucket] += e.value.n
	}
	lhist := mi.Lhist
	keys, hists := view.hists(hists)
	if s.json {
		data := map[string]any{}
		for _, k := range keys {
			var buckets []map[string]any
			for _, i := range slices.Sorted(maps.Keys(hists[k])) {
				buckets = append(buckets, map[string]any{"bucket": histLabel(i, lhist), "count": hists[k][i]})
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
		printHist(w, hists[k], lhist)
	}
	return nil
}

// clearMap deletes every element of a map; with zero, it sets every value
// to 0 instead. The keys are collected first: deleting while walking with
// NextKey would restart the walk.
func (s *Session) clearMap(name string, zero bool) error {
	l := s.out.Layout(name)
	if l == nil {
		return nil
	}
	m, packedKey := s.scriptMap(l)
	if m == nil {
		return nil
	}
	if packedKey != nil {
		var err error
		if zero {
			err = zeroValue(m, packedKey)
		} else {
			err = m.Delete(packedKey)
		}
		if err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
			return fmt.Errorf("clear @%s: %w", name, err)
		}
		return nil
	}
	var keys [][]byte
	var cur any // nil: the first key
	for {
		next := make([]byte, m.KeySize())
		err := m.NextKey(cur, &next)
		if errors.Is(err, ebpf.ErrKeyNotExist) {
			break
		}
		if err != nil {
			return fmt.Errorf("clear @%s: %w", name, err)
		}
		keys = append(keys, next)
		cur = next
	}
	for _, k := range keys {
		var err error
		if zero {
			err = zeroValue(m, k)
		} else {
			err = m.Delete(k)
		}
		if err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
			return fmt.Errorf("clear @%s: %w", name, err)
		}
	}
	return nil
}

func zeroValue(m *ebpf.Map, key []byte) error {
	if m.Type() == ebpf.PerCPUHash {
		n, err := ebpf.PossibleCPU()
		if err != nil {
			return err
		}
		return m.Update(key, make([]uint64, n), ebpf.UpdateExist)
	}
	return m.Update(key, uint64(0), ebpf.UpdateExist)
}

// valueType is how a map's value prints: aggregations as signed numbers.
func valueType(t types.Type) types.Type {
	if t.Kind == types.Agg {
		return types.S64
	}
	return t
}

// formatKey renders the script's keys of a map element: [udp, 9]; with
// parts, also each key alone.
func (f *formatter) formatKey(l *codegen.MapLayout, key []byte, parts bool) (string, []string) {
	if len(l.Keys) == 0 {
		return "", nil
	}
	out := make([]string, len(l.Keys))
	for i, p := range l.Keys {
		out[i] = f.value(p.Type, key[p.Offset:p.Offset+p.Size])
	}
	whole := "[" + strings.Join(out, ", ") + "]"
	if !parts {
		return whole, nil
	}
	return whole, out
}

// unset reports, for a min or max map, the elements no CPU has set a
// value in: printed as absent.
func unset(l *codegen.MapLayout) func(mapEntry) bool {
	return func(e mapEntry) bool {
		return (l.Kind == codegen.MapMin || l.Kind == codegen.MapMax) && !e.value.seen
	}
}

// scriptMap is the kernel map that holds a script's map and, where it
// shares one with other keyless aggregations (MapLayout.Slot), the key of
// its one element there.
func (s *Session) scriptMap(l *codegen.MapLayout) (m *ebpf.Map, packedKey []byte) {
	if l.Slot != nil {
		return s.coll.Maps[l.Slot.Map], binary.LittleEndian.AppendUint64(nil, l.Slot.Index)
	}
	return s.coll.Maps[codegen.MapName(l.Name)], nil
}
