package runtime

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/cilium/ebpf"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/lang/types"
)

// mapEntry is one decoded map element.
type mapEntry struct {
	key   string
	value int64
}

// readMap decodes a map's elements: keys formatted by their types, per-CPU
// values added up.
func (s *Session) readMap(mi *check.MapInfo, m *ebpf.Map) ([]mapEntry, error) {
	var out []mapEntry
	key := make([]byte, m.KeySize())
	perCPU := m.Type() == ebpf.PerCPUHash
	var one []byte
	var many [][]byte
	it := m.Iterate()
	for {
		var ok bool
		if perCPU {
			ok = it.Next(&key, &many)
		} else {
			ok = it.Next(&key, &one)
		}
		if !ok {
			break
		}
		var v uint64
		if perCPU {
			for _, b := range many {
				v += binary.LittleEndian.Uint64(b)
			}
		} else {
			v = binary.LittleEndian.Uint64(one)
		}
		out = append(out, mapEntry{key: s.formatKey(mi, key), value: int64(v)})
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("read @%s: %w", mi.Name, err)
	}
	return out, nil
}

func (s *Session) formatKey(mi *check.MapInfo, key []byte) string {
	if len(mi.Keys) == 0 {
		return ""
	}
	parts := make([]string, len(mi.Keys))
	for i, t := range mi.Keys {
		v := binary.LittleEndian.Uint64(key[8*i:])
		parts[i] = s.fmt.formatInt(v, t)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// PrintMaps prints every map that holds data, in bpftrace's layout:
// `@name[key]: value`, sorted by value, maps in the order the script names them.
func (s *Session) PrintMaps(w io.Writer) error {
	first := true
	for _, name := range s.info.MapOrder {
		printed, err := s.printMap(w, name, first)
		if err != nil {
			return err
		}
		first = first && !printed
	}
	return nil
}

// printMap prints one map, after a blank line unless it is the first output;
// it reports whether it printed anything.
func (s *Session) printMap(w io.Writer, name string, first bool) (bool, error) {
	mi := s.info.Maps[name]
	m := s.coll.Maps[codegen.MapName(name)]
	if m == nil || mi == nil {
		return false, nil
	}
	entries, err := s.readMap(mi, m)
	if err != nil || len(entries) == 0 {
		return false, err
	}
	sort.SliceStable(entries, func(i, j int) bool {
		if entries[i].value != entries[j].value {
			return entries[i].value < entries[j].value
		}
		return entries[i].key < entries[j].key
	})
	if s.json {
		var data any = entries[0].value
		if len(mi.Keys) > 0 {
			byKey := map[string]any{}
			for _, e := range entries {
				byKey[strings.Trim(e.key, "[]")] = e.value
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
		v := s.fmt.formatInt(uint64(e.value), valueType(mi.Value))
		if _, err := fmt.Fprintf(w, "@%s%s: %s\n", name, e.key, v); err != nil {
			return true, err
		}
	}
	return true, nil
}

// clearMap deletes every element of a map; zeroMap sets every value to 0.
func (s *Session) clearMap(name string, zero bool) error {
	m := s.coll.Maps[codegen.MapName(name)]
	if m == nil {
		return nil
	}
	var keys [][]byte
	key := make([]byte, m.KeySize())
	var next []byte
	for {
		var err error
		if len(keys) == 0 {
			next, err = nextKey(m, nil)
		} else {
			next, err = nextKey(m, key)
		}
		if err != nil || next == nil {
			break
		}
		keys = append(keys, next)
		key = next
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

func nextKey(m *ebpf.Map, key []byte) ([]byte, error) {
	next := make([]byte, m.KeySize())
	var k any
	if key != nil {
		k = key
	}
	if err := m.NextKey(k, &next); err != nil {
		if errors.Is(err, ebpf.ErrKeyNotExist) {
			return nil, nil
		}
		return nil, err
	}
	return next, nil
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

// valueType is how a map's value prints: aggregations as signed counts.
func valueType(t types.Type) types.Type {
	if t.Kind == types.Agg {
		return types.S64
	}
	return t
}
