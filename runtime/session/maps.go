package session

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/cilium/ebpf"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/runtime/output"
)

// readMap decodes a map's elements: keys formatted by their types, per-CPU
// values combined by the aggregation.
func (s *Session) readMap(l *codegen.MapLayout) ([]output.Entry, error) {
	return s.readMapWith(s.fmt, l, false)
}

// readMapWith is readMap formatting with f; with parts, each entry also
// has its keys formatted each.
func (s *Session) readMapWith(f *output.Values, l *codegen.MapLayout, parts bool) ([]output.Entry, error) {
	m, packedKey := s.scriptMap(l)
	if m == nil {
		return nil, nil
	}
	if packedKey != nil {
		var many [][]byte
		if err := m.Lookup(packedKey, &many); errors.Is(err, ebpf.ErrKeyNotExist) {
			return nil, nil
		} else if err != nil {
			return nil, fmt.Errorf("read @%s: %w", l.Name, err)
		}
		return []output.Entry{f.Entry(l, packedKey, many, parts)}, nil
	}
	var out []output.Entry
	err := walkMap(m, func(key []byte, perCPU [][]byte) {
		out = append(out, f.Entry(l, key, perCPU, parts))
	})
	if err != nil {
		return nil, fmt.Errorf("read @%s: %w", l.Name, err)
	}
	return output.MergeRuleKeys(l, out), nil
}

// mapData reads a map to hand it to the printer.
func (s *Session) mapData(l *codegen.MapLayout) (output.MapData, error) {
	if m, _ := s.scriptMap(l); m == nil {
		return output.MapData{Layout: l, Absent: true}, nil
	}
	entries, err := s.readMap(l)
	return output.MapData{Layout: l, Entries: entries}, err
}

// PrintMaps prints every map that holds data, in the chosen format (text:
// `@name[key]: value`, sorted by value, maps in the order the script
// names them).
func (s *Session) PrintMaps(w io.Writer) error {
	maps := make([]output.MapData, 0, len(s.out.MapLayouts))
	for _, l := range s.out.MapLayouts {
		m, err := s.mapData(l)
		if err != nil {
			return err
		}
		maps = append(maps, m)
	}
	return s.pr.Maps(w, maps)
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
	clearKey := func(k []byte) error {
		var err error
		if zero {
			err = zeroValue(m, k)
		} else {
			err = m.Delete(k)
		}
		if err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
			return fmt.Errorf("clear @%s: %w", name, err)
		}
		return nil
	}
	if packedKey != nil {
		return clearKey(packedKey)
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
		if err := clearKey(k); err != nil {
			return err
		}
	}
	return nil
}

func zeroValue(m *ebpf.Map, key []byte) error {
	// An aggregation's value is 8 bytes (count, sum) or 16 (avg, stats,
	// min, max: a value and a count or a flag): all of it zeroed.
	size := int(m.ValueSize())
	if codegen.PerCPU(m.Type()) {
		n, err := ebpf.PossibleCPU()
		if err != nil {
			return err
		}
		vals := make([][]byte, n)
		for i := range vals {
			vals[i] = make([]byte, size)
		}
		return m.Update(key, vals, ebpf.UpdateExist)
	}
	return m.Update(key, make([]byte, size), ebpf.UpdateExist)
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
