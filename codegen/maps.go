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

// IsHist reports whether a map holds a histogram: its key then ends with
// the bucket index.
func IsHist(mi *check.MapInfo) bool {
	return mi.Value.Kind == types.Agg && (mi.Value.Agg == types.AggHist || mi.Value.Agg == types.AggLhist)
}

func keySize(mi *check.MapInfo) uint32 {
	n := uint32(8 * len(mi.Keys))
	if IsHist(mi) {
		n += 8
	}
	if n == 0 {
		n = 8
	}
	return n
}

// valueSize is 16 for the aggregations that keep two numbers: min and max
// keep the value and whether it is set; avg and stats the count and the sum.
func valueSize(mi *check.MapInfo) uint32 {
	if mi.Value.Kind == types.Agg {
		switch mi.Value.Agg {
		case types.AggMin, types.AggMax, types.AggAvg, types.AggStats:
			return 16
		}
	}
	return 8
}

func (ms *mapSet) spec(mi *check.MapInfo) (*ebpf.MapSpec, error) {
	name := MapName(mi.Name)
	if s, ok := ms.specs[name]; ok {
		return s, nil
	}
	if !allScalar(mi.Keys) {
		return nil, fmt.Errorf("@%s: only integer keys are compiled yet", mi.Name)
	}
	s := &ebpf.MapSpec{Name: name, KeySize: keySize(mi), ValueSize: valueSize(mi), MaxEntries: maxEntries}
	switch {
	case mi.Value.Kind == types.Agg:
		// Per-CPU: no atomics on the hot path; the runtime combines the CPUs.
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
		case "min", "max", "avg", "stats":
			if err := g.expr(v.Args[0]); err != nil {
				return err
			}
			return g.aggregate2(m, spec, v.Name)
		case "hist", "lhist":
			if err := g.expr(v.Args[0]); err != nil {
				return err
			}
			g.mapOf[v] = m.Name
			if err := g.bucket(v); err != nil {
				return err
			}
			return g.histCount(m, spec)
		default:
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
	g.vs.pop(asm.R0)
	g.emit(asm.StoreMem(asm.RFP, val, asm.R0, asm.DWord))
	if add {
		g.addOrCreate(spec.Name, key, val)
	} else {
		g.update("", spec.Name, key, val)
	}
	return nil
}

// update emits bpf_map_update_elem(map, R10+key, R10+val, BPF_ANY); label,
// if not empty, names its first instruction.
func (g *gen) update(label, mapName string, key, val int16) {
	first := asm.LoadMapPtr(asm.R1, 0).WithReference(mapName)
	if label != "" {
		first = first.WithSymbol(label)
	}
	g.emit(
		first,
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, int32(key)),
		asm.Mov.Reg(asm.R3, asm.RFP),
		asm.Add.Imm(asm.R3, int32(val)),
		asm.Mov.Imm(asm.R4, 0),
		asm.FnMapUpdateElem.Call(),
	)
}

// addOrCreate adds the u64 at R10+val to the element at R10+key, creating
// the element with that value when there is none.
func (g *gen) addOrCreate(mapName string, key, val int16) {
	create, done := g.label("create"), g.label("added")
	g.lookup(mapName, key)
	g.emit(
		asm.JEq.Imm(asm.R0, 0, create),
		asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
		asm.LoadMem(asm.R2, asm.RFP, val, asm.DWord),
		asm.Add.Reg(asm.R1, asm.R2),
		asm.StoreMem(asm.R0, 0, asm.R1, asm.DWord),
		asm.Ja.Label(done),
	)
	g.update(create, mapName, key, val)
	g.mark(done)
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

// aggregate2 updates a two-number aggregation with the value on the stack:
// min/max keep [value, set], avg/stats keep [count, sum].
func (g *gen) aggregate2(m *lang.MapExpr, spec *ebpf.MapSpec, fn string) error {
	key, err := g.buildKey(m, spec.KeySize)
	if err != nil {
		return err
	}
	val, err := g.frame.alloc(16)
	if err != nil {
		return err
	}
	create, done := g.label("agg_new"), g.label("agg_done")
	g.vs.pop(asm.R0)
	g.emit(asm.StoreMem(asm.RFP, val, asm.R0, asm.DWord))
	g.lookup(spec.Name, key)
	g.emit(asm.JEq.Imm(asm.R0, 0, create), asm.LoadMem(asm.R2, asm.RFP, val, asm.DWord))
	switch fn {
	case "min", "max":
		// Another CPU may have created the key: this CPU's slot is unset.
		set := g.label("agg_set")
		g.emit(
			asm.LoadMem(asm.R1, asm.R0, 8, asm.DWord),
			asm.JEq.Imm(asm.R1, 0, set),
			asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
		)
		if fn == "min" {
			g.emit(asm.JSGE.Reg(asm.R2, asm.R1, done))
		} else {
			g.emit(asm.JSLE.Reg(asm.R2, asm.R1, done))
		}
		g.emit(
			asm.StoreMem(asm.R0, 0, asm.R2, asm.DWord).WithSymbol(set),
			asm.Mov.Imm(asm.R1, 1),
			asm.StoreMem(asm.R0, 8, asm.R1, asm.DWord),
			asm.Ja.Label(done),
		)
		g.emit(asm.Mov.Imm(asm.R1, 1).WithSymbol(create), asm.StoreMem(asm.RFP, val+8, asm.R1, asm.DWord))
	default: // avg, stats: [count, sum]
		g.emit(
			asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
			asm.Add.Imm(asm.R1, 1),
			asm.StoreMem(asm.R0, 0, asm.R1, asm.DWord),
			asm.LoadMem(asm.R1, asm.R0, 8, asm.DWord),
			asm.Add.Reg(asm.R1, asm.R2),
			asm.StoreMem(asm.R0, 8, asm.R1, asm.DWord),
			asm.Ja.Label(done),
		)
		g.emit(
			asm.LoadMem(asm.R2, asm.RFP, val, asm.DWord).WithSymbol(create),
			asm.StoreMem(asm.RFP, val+8, asm.R2, asm.DWord),
			asm.Mov.Imm(asm.R1, 1),
			asm.StoreMem(asm.RFP, val, asm.R1, asm.DWord),
		)
	}
	g.update("", spec.Name, key, val)
	g.mark(done)
	return nil
}

// bucket replaces the value on the stack by its histogram bucket. hist:
// 0 for values below 1, else 1 + floor(log2(v)). lhist(v, lo, hi, step): 0
// below lo, 1 + (v-lo)/step inside, and the last bucket from hi on.
func (g *gen) bucket(c *lang.CallExpr) error {
	g.vs.pop(asm.R0)
	done := g.label("bucket")
	if c.Name == "hist" {
		g.emit(asm.Mov.Imm(asm.R1, 0), asm.JSLT.Imm(asm.R0, 1, done+"_set"))
		g.emit(asm.Mov.Imm(asm.R1, 1))
		for _, shift := range []int32{32, 16, 8, 4, 2, 1} {
			skip := g.label("log2")
			g.emit(
				asm.Mov.Reg(asm.R2, asm.R0),
				asm.RSh.Imm(asm.R2, shift),
				asm.JEq.Imm(asm.R2, 0, skip),
				asm.Mov.Reg(asm.R0, asm.R2),
				asm.Add.Imm(asm.R1, shift),
			)
			g.mark(skip)
		}
	} else {
		lo, ok1 := g.info.ConstInt(c.Args[1])
		hi, ok2 := g.info.ConstInt(c.Args[2])
		step, ok3 := g.info.ConstInt(c.Args[3])
		if !ok1 || !ok2 || !ok3 || step <= 0 {
			return unsupported(c, "lhist without constant bounds")
		}
		last := (hi-lo+step-1)/step + 1
		if m, ok := g.mapOf[c]; ok {
			g.out.Lhist[m] = [3]int64{lo, hi, step}
		}
		g.emit(
			asm.Mov.Imm(asm.R1, 0),
			asm.LoadImm(asm.R2, lo, asm.DWord),
			asm.JSLT.Reg(asm.R0, asm.R2, done+"_set"),
			asm.Mov.Imm(asm.R1, int32(last)),
			asm.LoadImm(asm.R2, hi, asm.DWord),
			asm.JSGE.Reg(asm.R0, asm.R2, done+"_set"),
			asm.LoadImm(asm.R2, lo, asm.DWord),
			asm.Sub.Reg(asm.R0, asm.R2),
			asm.Div.Imm(asm.R0, int32(step)),
			asm.Add.Imm(asm.R0, 1),
			asm.Mov.Reg(asm.R1, asm.R0),
		)
	}
	g.emit(asm.Mov.Reg(asm.R0, asm.R1).WithSymbol(done + "_set"))
	return g.vs.push(asm.R0)
}

// histCount adds 1 to the bucket on the stack, under the map's keys.
func (g *gen) histCount(m *lang.MapExpr, spec *ebpf.MapSpec) error {
	key, err := g.buildKey(m, spec.KeySize)
	if err != nil {
		return err
	}
	g.vs.pop(asm.R0)
	g.emit(asm.StoreMem(asm.RFP, key+int16(8*len(m.Keys)), asm.R0, asm.DWord))
	val, err := g.frame.alloc(8)
	if err != nil {
		return err
	}
	g.emit(asm.Mov.Imm(asm.R1, 1), asm.StoreMem(asm.RFP, val, asm.R1, asm.DWord))
	g.addOrCreate(spec.Name, key, val)
	return nil
}

// allScalar reports whether every type is an integer or pointer (the key
// layouts compiled so far).
func allScalar(ts []types.Type) bool {
	for _, t := range ts {
		if !t.IsScalar() {
			return false
		}
	}
	return true
}
