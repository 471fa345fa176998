package codegen

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
)

// maxEntries bounds every map; a full map drops updates, which the runtime
// will count and report.
const maxEntries = 10240

// mapSet creates the maps' specs as programs use them.
type mapSet struct {
	info  *check.Info
	specs map[string]*ebpf.MapSpec
}

// MapName is the eBPF name of a script map (`@` alone is "at").
func MapName(name string) string {
	if name == "" {
		return "m_at"
	}
	return "m_" + name
}

func keySize(mi *check.MapInfo) uint32 {
	n := uint32(8 * len(mi.Keys))
	if n == 0 {
		n = 8
	}
	return n
}

func (ms *mapSet) spec(mi *check.MapInfo) (*ebpf.MapSpec, error) {
	name := MapName(mi.Name)
	if s, ok := ms.specs[name]; ok {
		return s, nil
	}
	if !allScalar(mi.Keys) {
		return nil, fmt.Errorf("@%s: only integer keys are compiled yet", mi.Name)
	}
	s := &ebpf.MapSpec{Name: name, KeySize: keySize(mi), ValueSize: 8, MaxEntries: maxEntries}
	switch {
	case mi.Value.Kind == types.Agg && (mi.Value.Agg == types.AggCount || mi.Value.Agg == types.AggSum):
		// Per-CPU: no atomics on the hot path; the runtime adds the CPUs up.
		s.Type = ebpf.PerCPUHash
	case mi.Value.IsScalar():
		s.Type = ebpf.Hash
	default:
		return nil, fmt.Errorf("@%s: %s maps are not compiled yet", mi.Name, mi.Value)
	}
	ms.specs[name] = s
	return s, nil
}

// assignMap compiles `@m[k...] op value`: count() and sum() add to a per-CPU
// value, `=` stores, `+=`-style operators update in place.
func (g *gen) assignMap(s *lang.AssignStmt, m *lang.MapExpr) error {
	mi := g.info.Maps[m.Name]
	spec, err := g.maps.spec(mi)
	if err != nil {
		return err
	}
	// The value first: it may call helpers, and then lives in R6-R8 or a slot.
	add := s.Op == "+=" || s.Op == "-="
	switch v := s.Value.(type) {
	case *lang.CallExpr:
		switch v.Name {
		case "count":
			g.emit(asm.Mov.Imm(asm.R0, 1))
			if err := g.vs.push(asm.R0); err != nil {
				return err
			}
			add = true
		case "sum":
			if err := g.expr(v.Args[0]); err != nil {
				return err
			}
			add = true
		default:
			if mi.Value.Kind == types.Agg {
				return unsupported(s, v.Name+"()")
			}
			if err := g.expr(v); err != nil {
				return err
			}
		}
	default:
		if err := g.expr(s.Value); err != nil {
			return err
		}
		if s.Op != "=" && !add {
			return unsupported(s, s.Op+" on a map")
		}
	}
	if s.Op == "-=" {
		g.vs.pop(asm.R0)
		g.emit(asm.Neg.Imm(asm.R0, 0))
		if err := g.vs.push(asm.R0); err != nil {
			return err
		}
	}
	key, err := g.buildKey(m, spec.KeySize)
	if err != nil {
		return err
	}
	val, err := g.frame.alloc(8)
	if err != nil {
		return err
	}
	mapName := spec.Name
	update, done := g.label("update"), g.label("stored")
	g.vs.pop(asm.R0)
	g.emit(asm.StoreMem(asm.RFP, val, asm.R0, asm.DWord))
	if add {
		g.lookup(mapName, key)
		g.emit(
			asm.JEq.Imm(asm.R0, 0, update),
			asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
			asm.LoadMem(asm.R2, asm.RFP, val, asm.DWord),
			asm.Add.Reg(asm.R1, asm.R2),
			asm.StoreMem(asm.R0, 0, asm.R1, asm.DWord),
			asm.Ja.Label(done),
		)
	}
	g.emit(
		asm.LoadMapPtr(asm.R1, 0).WithReference(mapName).WithSymbol(update),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, int32(key)),
		asm.Mov.Reg(asm.R3, asm.RFP),
		asm.Add.Imm(asm.R3, int32(val)),
		asm.Mov.Imm(asm.R4, 0),
		asm.FnMapUpdateElem.Call(),
	)
	g.mark(done)
	return nil
}

// buildKey evaluates the key parts into a zeroed key buffer, 8 bytes each.
func (g *gen) buildKey(m *lang.MapExpr, size uint32) (int16, error) {
	key, err := g.frame.alloc(int(size))
	if err != nil {
		return 0, err
	}
	for off := int16(0); off < int16(size); off += 8 {
		g.emit(zero8(key + off)...)
	}
	for i, k := range m.Keys {
		if err := g.expr(k); err != nil {
			return 0, err
		}
		g.vs.pop(asm.R0)
		g.emit(asm.StoreMem(asm.RFP, key+int16(8*i), asm.R0, asm.DWord))
	}
	return key, nil
}

// lookup emits bpf_map_lookup_elem(map, R10+key); R0 is the value or NULL.
func (g *gen) lookup(mapName string, key int16) {
	g.emit(
		asm.LoadMapPtr(asm.R1, 0).WithReference(mapName),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, int32(key)),
		asm.FnMapLookupElem.Call(),
	)
}
