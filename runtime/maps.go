package runtime

import (
	"encoding/binary"
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
		mi := s.info.Maps[name]
		m := s.coll.Maps[codegen.MapName(name)]
		if m == nil {
			continue
		}
		entries, err := s.readMap(mi, m)
		if err != nil {
			return err
		}
		if len(entries) == 0 {
			continue
		}
		sort.SliceStable(entries, func(i, j int) bool {
			if entries[i].value != entries[j].value {
				return entries[i].value < entries[j].value
			}
			return entries[i].key < entries[j].key
		})
		if s.json {
			data := map[string]any{}
			for _, e := range entries {
				data[strings.Trim(e.key, "[]")] = e.value
			}
			if len(mi.Keys) == 0 {
				fmt.Fprint(w, jsonLine(map[string]any{"type": "map", "data": map[string]any{"@" + name: entries[0].value}}))
			} else {
				fmt.Fprint(w, jsonLine(map[string]any{"type": "map", "data": map[string]any{"@" + name: data}}))
			}
			continue
		}
		if !first {
			fmt.Fprintln(w)
		}
		first = false
		for _, e := range entries {
			v := s.fmt.formatInt(uint64(e.value), valueType(mi.Value))
			fmt.Fprintf(w, "@%s%s: %s\n", name, e.key, v)
		}
	}
	return nil
}

// valueType is how a map's value prints: aggregations as signed counts.
func valueType(t types.Type) types.Type {
	if t.Kind == types.Agg {
		return types.S64
	}
	return t
}
