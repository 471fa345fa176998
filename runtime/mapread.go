package runtime

import (
	"encoding/binary"
	"fmt"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
)

// MapEntry is one element of a script's map as ReadMap reads it: each key
// part formatted as the printer prints it, the per-CPU values combined.
type MapEntry struct {
	Keys []string
	// Value is the number: a count, sum, min, max, average or plain
	// integer value; Count and Sum are avg()'s and stats()'s parts.
	Value      int64
	Count, Sum int64
	// Seen is false for a min() or max() no CPU has a value for.
	Seen bool
	// Bucket is a histogram element's bucket index.
	Bucket int64
}

// ReadMap reads the script's map name (without the @) from the kernel.
// It may be called while tracing.
func (s *Session) ReadMap(name string) ([]MapEntry, error) {
	mi := s.info.Maps[name]
	if mi == nil {
		return nil, fmt.Errorf("no map @%s", name)
	}
	entries, err := s.readMap(mi)
	if err != nil {
		return nil, err
	}
	parts, _ := codegen.KeyLayout(mi)
	out := make([]MapEntry, len(entries))
	for i, e := range entries {
		me := MapEntry{Keys: make([]string, len(parts)), Value: e.value.n, Count: e.value.cnt, Sum: e.value.sum,
			Seen: e.value.seen || (mi.Value.Agg != types.AggMin && mi.Value.Agg != types.AggMax), Bucket: e.bucket}
		for j, p := range parts {
			me.Keys[j] = s.fmt.value(p.Type, e.rawKey[p.Offset:p.Offset+p.Size])
		}
		if e.raw != nil && len(e.raw) >= 8 && mi.Value.Kind == types.Int {
			me.Value = int64(binary.LittleEndian.Uint64(e.raw))
		}
		out[i] = me
	}
	return out, nil
}

// MapDesc describes one of the script's maps for ReadMap's callers.
type MapDesc struct {
	Name string
	// Value is its value's type (types.Agg for aggregations); Keys its
	// key parts' types and KeyNames their expressions.
	Value    types.Type
	Keys     []types.Type
	KeyNames []string
	// Lhist is an lhist map's min, max and step.
	Lhist *[3]int64
}

// Maps describes the script's maps, in the order the script names them.
func (s *Session) Maps() []MapDesc {
	var out []MapDesc
	for _, name := range s.info.MapOrder {
		mi := s.info.Maps[name]
		if mi == nil {
			continue
		}
		d := MapDesc{Name: name, Value: mi.Value, Keys: mi.Keys, KeyNames: s.keyNames(mi)}
		if b, ok := s.out.Lhist[name]; ok {
			d.Lhist = &b
		}
		out = append(out, d)
	}
	return out
}

// keyNames are a map's key expressions as written where it is first
// assigned; keyN where the key is a tuple spread into parts.
func (s *Session) keyNames(mi *check.MapInfo) []string {
	names := make([]string, len(mi.Keys))
	var first *lang.MapExpr
	for e := range s.info.Types {
		if m, ok := e.(*lang.MapExpr); ok && m.Name == mi.Name && m.Span() == mi.First {
			first = m
			break
		}
	}
	for i := range names {
		if first != nil && len(first.Keys) == len(names) {
			names[i] = s.info.Text(first.Keys[i])
		} else {
			names[i] = fmt.Sprintf("key%d", i+1)
		}
	}
	return names
}
