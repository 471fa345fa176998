package codegen

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
)

// maxEntries bounds every map; a full map drops updates, which the runtime
// will count and report.
const maxEntries = 10240

// mapSet creates the maps' specs as programs use them.
type mapSet struct {
	// layouts are the script's maps by name (Output.MapLayouts).
	layouts map[string]*MapLayout
	specs   map[string]*ebpf.MapSpec
	cpus    int // possible CPUs, for per-CPU reads
	// perf sends records to a perf event array; eventsBytes sizes the
	// buffer (0: the default).
	perf        bool
	eventsBytes int
	// track is set when the script calls track() anywhere: every skb
	// program then lets tracked skbs past its predicate.
	track bool
	// snaplen bounds the packet bytes of a capture() record.
	snaplen int
	// ruleFlows is Options.RuleFlows.
	ruleFlows bool
	// pageMul and pageOff turn a struct page pointer into its bytes'
	// address (Options.PageMul); 0: fragments are not read.
	pageMul, pageOff uint64
	// arch is the GOARCH whose struct pt_regs kprobes read ("" is this
	// binary's); haveFuncIP is Options.HaveFuncIP.
	arch       string
	haveFuncIP func() bool
	// haveHelper is Options.HaveHelper.
	haveHelper func(asm.BuiltinFunc) bool
	// sample and maxRate are Options.Sample and Options.MaxRate; sampled
	// is set once a program has --sample's gate (sample.go).
	sample, maxRate uint32
	sampled         bool
}

// noFuncIP reports whether the kernel lacks bpf_get_func_ip.
func (ms *mapSet) noFuncIP() bool { return ms.haveFuncIP != nil && !ms.haveFuncIP() }

// kprobeRegs is the struct pt_regs layout kprobe programs read.
func (ms *mapSet) kprobeRegs() (*regsLayout, error) { return archRegs(ms.arch) }

// MapName is the eBPF name of a script map (`@` alone is "at").
func MapName(name string) string {
	if name == "" {
		return "m_at"
	}
	return "m_" + name
}

// layout is the layout of the script's map name.
func (ms *mapSet) layout(name string) *MapLayout { return ms.layouts[name] }

// spec is the kernel map that holds a script's map, created at its first
// use.
func (ms *mapSet) spec(l *MapLayout) (*ebpf.MapSpec, error) {
	name := l.KernelMap()
	if s, ok := ms.specs[name]; ok {
		return s, nil
	}
	s := &ebpf.MapSpec{Name: name, KeySize: uint32(l.KeySize), ValueSize: uint32(l.ValueSize), MaxEntries: maxEntries}
	switch {
	case l.Value.Kind == types.Agg:
		// Per-CPU: no atomics on the hot path; the runtime combines the CPUs.
		s.Type = ebpf.PerCPUHash
	case storableValue(l.Value):
		s.Type = ebpf.Hash
	default:
		return nil, fmt.Errorf("@%s: %s maps are not compiled yet", l.Name, l.Value)
	}
	declared(s, l)
	ms.specs[name] = s
	return s, nil
}

// assignMap compiles `@m[k...] op value`: count() and sum() add to a per-CPU
// value, `=` stores, `+=`-style operators update in place.
func (g *gen) assignMap(s *lang.AssignStmt, m *lang.MapExpr) error {
	l := g.maps.layout(m.Name)
	spec, err := g.maps.spec(l)
	if err != nil {
		return err
	}
	if l.Value.Kind != types.Agg && !inReg(l.Value) {
		// A string or an address: written to a slot, then stored.
		val, err := g.frame.alloc(int(spec.ValueSize))
		if err != nil {
			return err
		}
		if err := g.intoType(s.Value, val, l.Value); err != nil {
			return err
		}
		key, err := g.buildKey(m)
		if err != nil {
			return err
		}
		g.update(spec.Name, key, val)
		return nil
	}
	// The value first: it may call helpers, and then lives in R6-R8 or a slot.
	add := s.Op == "+=" || s.Op == "-="
	switch v := s.Value.(type) {
	case *lang.CallExpr:
		switch v.Name {
		case "count":
			key, val, err := g.keyAndValue(m)
			if err != nil {
				return err
			}
			g.addOrCreateImm(spec.Name, key, val, 1)
			return nil
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
		case "tseries":
			if err := g.expr(v.Args[0]); err != nil {
				return err
			}
			return g.tseries(m, spec, v)
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
			return g.opAssignMap(s, m, spec.Name)
		}
	}
	if s.Op == "-=" {
		g.vs.pop(asm.R0)
		g.emit(asm.Neg.Imm(asm.R0, 0))
		if err := g.vs.push(asm.R0); err != nil {
			return err
		}
	}
	key, val, err := g.keyAndValue(m)
	if err != nil {
		return err
	}
	g.vs.pop(asm.R0)
	g.emit(asm.StoreMem(asm.RFP, val, asm.R0, asm.DWord))
	if add {
		g.addOrCreate(spec.Name, key, val)
	} else {
		g.update(spec.Name, key, val)
	}
	return nil
}

// keyAndValue evaluates the key of `@m[k...]` into its slot and reserves
// an 8-byte slot for the value to store.
func (g *gen) keyAndValue(m *lang.MapExpr) (key, val int16, err error) {
	if key, err = g.buildKey(m); err != nil {
		return 0, 0, err
	}
	val, err = g.frame.alloc(8)
	return key, val, err
}

// opAssignMap compiles `@m[k] op= value` for the operators other than += and
// -=: the element (0 when absent) is read, combined and stored back. The
// value is on the stack.
func (g *gen) opAssignMap(s *lang.AssignStmt, m *lang.MapExpr, mapName string) error {
	op, ok := aluOps[s.Op[:len(s.Op)-1]]
	if !ok {
		return unsupported(s, s.Op+" on a map")
	}
	if g.maps.layout(m.Name).Value.Signed && (op == asm.Div || op == asm.Mod) {
		op += asm.SDiv - asm.Div
	}
	key, val, err := g.keyAndValue(m)
	if err != nil {
		return err
	}
	absent := g.label("absent")
	g.emit(zero8(val)...)
	g.lookup(mapName, key)
	g.emit(asm.JEq.Imm(asm.R0, 0, absent), asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord), asm.StoreMem(asm.RFP, val, asm.R1, asm.DWord))
	g.mark(absent)
	g.vs.pop(asm.R1)
	g.emit(asm.LoadMem(asm.R0, asm.RFP, val, asm.DWord), op.Reg(asm.R0, asm.R1), asm.StoreMem(asm.RFP, val, asm.R0, asm.DWord))
	g.update(mapName, key, val)
	return nil
}

// update emits bpf_map_update_elem(map, R10+key, R10+val, BPF_ANY).
func (g *gen) update(mapName string, key, val int16) {
	g.updateFrom(mapName, key, asm.Mov.Reg(asm.R3, asm.RFP), asm.Add.Imm(asm.R3, int32(val)))
}

// updateFrom emits bpf_map_update_elem(map, R10+key, value, BPF_ANY),
// where the instructions value put the value's address in R3.
func (g *gen) updateFrom(mapName string, key int16, value ...asm.Instruction) {
	g.emit(
		asm.LoadMapPtr(asm.R1, 0).WithReference(mapName),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, int32(key)),
	)
	g.emit(value...)
	g.emit(
		asm.Mov.Imm(asm.R4, 0),
		asm.FnMapUpdateElem.Call(),
	)
	g.mapFullWarning(mapName)
}

// addOrCreateImm adds n to the element at R10+key, creating the element
// with n when there is none: count() and hist()'s buckets. A 1 comes from
// the read-only one map (no store, and its address is one instruction),
// other values from R10+val.
func (g *gen) addOrCreateImm(mapName string, key, val int16, n int32) {
	add := []asm.Instruction{asm.Add.Imm(asm.R1, n)}
	if n == 1 && !g.noOne {
		g.maps.oneMap()
		g.addOrCreateFrom(mapName, key, add, nil, asm.LoadMapValue(asm.R3, 0, 0).WithReference(OneMap))
		return
	}
	g.addOrCreateWith(mapName, key, val, add, storeImm64(val, n))
}

// addOrCreate adds the u64 at R10+val to the element at R10+key, creating
// the element with that value when there is none.
func (g *gen) addOrCreate(mapName string, key, val int16) {
	g.addOrCreateWith(mapName, key, val, []asm.Instruction{asm.LoadMem(asm.R2, asm.RFP, val, asm.DWord), asm.Add.Reg(asm.R1, asm.R2)})
}

// addOrCreateWith looks up the element at R10+key: where it is, add adds
// to R1, its value; where it is not, first (if any) writes R10+val, and the
// element is created with R10+val.
func (g *gen) addOrCreateWith(mapName string, key, val int16, add []asm.Instruction, first ...asm.Instruction) {
	g.addOrCreateFrom(mapName, key, add, first, asm.Mov.Reg(asm.R3, asm.RFP), asm.Add.Imm(asm.R3, int32(val)))
}

// addOrCreateFrom is addOrCreateWith with the new element's value at the
// address that value puts in R3.
func (g *gen) addOrCreateFrom(mapName string, key int16, add, first []asm.Instruction, value ...asm.Instruction) {
	create, done := g.label("create"), g.label("added")
	g.lookup(mapName, key)
	g.emit(asm.JEq.Imm(asm.R0, 0, create), asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord))
	g.emit(add...)
	g.emit(asm.StoreMem(asm.R0, 0, asm.R1, asm.DWord), asm.Ja.Label(done))
	g.mark(create)
	g.emit(first...)
	g.updateFrom(mapName, key, value...)
	g.mark(done)
}

// buildKey evaluates the key parts into a zeroed key buffer, laid out as
// the map's layout says.
func (g *gen) buildKey(m *lang.MapExpr) (int16, error) {
	l := g.maps.layout(m.Name)
	key, err := g.frame.alloc(l.KeySize)
	if err != nil {
		return 0, err
	}
	if l.Slot != nil {
		// Its element in the map it shares.
		g.emit(storeImm64(key, int32(l.Slot.Index)))
	} else if len(m.Keys) == 0 && !l.Indexed() {
		// A keyless map's key is a zero; a keyless histogram's is only
		// its bucket, which the caller writes.
		g.zero(key, l.KeySize)
	}
	// Each part writes its whole slot (into zeroes what a value leaves
	// unwritten), and a histogram's caller writes the bucket after.
	if g.info.SpreadKey(m) {
		// A tuple is the map's keys, laid out as they are.
		return key, g.intoType(m.Keys[0], key, types.NewTuple(keyTypes(l), nil))
	}
	for i, k := range m.Keys {
		if err := g.intoType(k, key+int16(l.Keys[i].Offset), l.Keys[i].Type); err != nil {
			return 0, err
		}
	}
	return key, nil
}

// keyTypes are the types of a map's keys.
func keyTypes(l *MapLayout) []types.Type {
	ts := make([]types.Type, len(l.Keys))
	for i, k := range l.Keys {
		ts[i] = k.Type
	}
	return ts
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
	key, err := g.buildKey(m)
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
		g.emit(storeImm64(val+8, 1).WithSymbol(create))
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
	g.update(spec.Name, key, val)
	g.mark(done)
	return nil
}

// bucket replaces the value on the stack by its histogram bucket. hist, as
// bpftrace: 0 for negative values, 1 for 0, else 2 + floor(log2(v)). lhist(v, lo, hi, step): 0
// below lo, 1 + (v-lo)/step inside, and the last bucket from hi on. The
// value is in R1, the bucket is built in R0.
func (g *gen) bucket(c *lang.CallExpr) error {
	g.vs.pop(asm.R1)
	set := g.label("bucket") + "_set"
	var bits int64
	if c.Name == "hist" && len(c.Args) == 2 {
		bits, _ = g.info.ConstInt(c.Args[1])
		if m, ok := g.mapOf[c]; ok {
			g.maps.layout(m).HistBits = int(bits)
		}
	}
	if c.Name == "hist" {
		// A value just loaded from 4 bytes or fewer is neither negative
		// nor 1<<32 or more: those tests go.
		narrow := g.zeroExtended32(asm.R1)
		if bits > 0 {
			// hist(n, k) needs the value after the search for its top bit.
			g.emit(asm.Mov.Reg(asm.R3, asm.R1))
		}
		if !narrow {
			g.emit(asm.Mov.Imm(asm.R0, 0), asm.JSLT.Imm(asm.R1, 0, set))
		}
		g.emit(asm.Mov.Imm(asm.R0, 1), asm.JEq.Imm(asm.R1, 0, set))
		g.emit(asm.Mov.Imm(asm.R0, 2))
		// Binary search for the highest bit: 1<<32 is no immediate, so
		// the first step shifts a copy; the others compare with 1<<shift.
		if !narrow {
			skip := g.label("log2")
			g.emit(
				asm.Mov.Reg(asm.R2, asm.R1),
				asm.RSh.Imm(asm.R2, 32),
				asm.JEq.Imm(asm.R2, 0, skip),
				asm.Mov.Reg(asm.R1, asm.R2),
				asm.Add.Imm(asm.R0, 32),
			)
			g.mark(skip)
		}
		for _, shift := range []int32{16, 8, 4, 2, 1} {
			skip := g.label("log2")
			g.emit(asm.JLT.Imm(asm.R1, 1<<shift, skip))
			if shift > 1 {
				// The last step's shift would be read by nothing.
				g.emit(asm.RSh.Imm(asm.R1, shift))
			}
			g.emit(asm.Add.Imm(asm.R0, shift))
			g.mark(skip)
		}
		if bits > 0 {
			g.histBits(bits, set)
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
			g.maps.layout(m).Lhist = &[3]int64{lo, hi, step}
		}
		g.emit(asm.Mov.Imm(asm.R0, 0))
		g.jumpCmp(asm.JSLT, asm.R1, lo, set)
		g.emit(asm.Mov.Imm(asm.R0, int32(last)))
		g.jumpCmp(asm.JSGE, asm.R1, hi, set)
		g.emit(asm.Mov.Reg(asm.R0, asm.R1))
		if lo != 0 {
			if fitsImm(lo) {
				g.emit(asm.Sub.Imm(asm.R0, int32(lo)))
			} else {
				g.emit(asm.LoadImm(asm.R2, lo, asm.DWord), asm.Sub.Reg(asm.R0, asm.R2))
			}
		}
		g.emit(asm.Div.Imm(asm.R0, int32(step)), asm.Add.Imm(asm.R0, 1))
	}
	g.mark(set)
	return g.vs.push(asm.R0)
}

// zeroExtended32 reports whether the instructions just emitted leave r
// below 1<<32: a load of 4 bytes or fewer into it, or a 32-bit operation,
// maybe followed by a move from that register. Only a straight line counts:
// a label on either means another path arrives.
func (g *gen) zeroExtended32(r asm.Register) bool {
	n := len(g.insns)
	if n > 0 && isRegMove(g.insns[n-1]) && g.insns[n-1].Dst == r && g.insns[n-1].Symbol() == "" {
		r, n = g.insns[n-1].Src, n-1
	}
	if n == 0 {
		return false
	}
	ins := g.insns[n-1]
	if ins.Dst != r || ins.Symbol() != "" {
		return false
	}
	switch ins.OpCode.Class() {
	case asm.LdXClass:
		return ins.OpCode.Mode() == asm.MemMode && ins.OpCode.Size() != asm.DWord
	case asm.ALUClass:
		return ins.OpCode.ALUOp() != asm.Swap
	}
	return false
}

// fitsImm reports whether n is an instruction's immediate: 32 bits,
// sign-extended to 64.
func fitsImm(n int64) bool { return n == int64(int32(n)) }

// jumpCmp emits `if r op n goto label`, n an immediate where it fits, else
// loaded into R2.
func (g *gen) jumpCmp(op asm.JumpOp, r asm.Register, n int64, label string) {
	if fitsImm(n) {
		g.emit(op.Imm(r, int32(n), label))
		return
	}
	g.emit(asm.LoadImm(asm.R2, n, asm.DWord), op.Reg(r, asm.R2, label))
}

// histCount adds 1 to the bucket on the stack, under the map's keys.
func (g *gen) histCount(m *lang.MapExpr, spec *ebpf.MapSpec) error {
	key, err := g.buildKey(m)
	if err != nil {
		return err
	}
	g.vs.pop(asm.R0)
	g.emit(asm.StoreMem(asm.RFP, key+int16(spec.KeySize)-8, asm.R0, asm.DWord))
	val, err := g.frame.alloc(8)
	if err != nil {
		return err
	}
	g.addOrCreateImm(spec.Name, key, val, 1)
	return nil
}

// storableValue reports whether a plain (not aggregated) map value of type
// t is compiled: integers, pointers, stack ids, strings and addresses.
func storableValue(t types.Type) bool {
	return inReg(t) || t.Kind == types.String || t.Kind == types.Addr || t.Kind == types.Endpoint || t.Kind == types.Tuple || t.Kind == types.Array || t.Kind == types.Struct
}

// elemKey returns the map of `@m[k...]` and the frame slot of its key,
// evaluated.
func (g *gen) elemKey(m *lang.MapExpr) (*ebpf.MapSpec, int16, error) {
	spec, err := g.maps.spec(g.maps.layout(m.Name))
	if err != nil {
		return nil, 0, err
	}
	key, err := g.buildKey(m)
	return spec, key, err
}

// mapRead pushes the value of `@m[k...]`: 0 when absent. A per-CPU
// aggregation is combined over every CPU, with bpf_map_lookup_percpu_elem.
func (g *gen) mapRead(m *lang.MapExpr) error {
	spec, key, err := g.elemKey(m)
	if err != nil {
		return err
	}
	if !PerCPU(spec.Type) {
		absent := g.label("absent")
		g.lookup(spec.Name, key)
		g.emit(asm.JEq.Imm(asm.R0, 0, absent), asm.LoadMem(asm.R0, asm.R0, 0, asm.DWord))
		g.mark(absent)
		return g.vs.push(asm.R0)
	}
	return g.perCPURead(spec.Name, key, g.maps.layout(m.Name).Value.Agg)
}

// perCPURead combines a per-CPU aggregation's values for one key: the sum
// of counts and sums, the least or greatest of the CPUs that hold a min or
// max. It is a loop over the CPUs, bounded by the number the runtime gives.
func (g *gen) perCPURead(mapName string, key int16, agg types.AggKind) error {
	acc, err := g.frame.alloc(16) // the result, and whether it is set
	if err != nil {
		return err
	}
	cpu, err := g.frame.alloc(8)
	if err != nil {
		return err
	}
	loop, next, done := g.label("cpu_loop"), g.label("cpu_next"), g.label("cpu_done")
	g.emit(zero8(acc)...)
	g.emit(zero8(acc + 8)...)
	g.emit(zero8(cpu)...)
	g.emit(
		asm.LoadMem(asm.R3, asm.RFP, cpu, asm.DWord).WithSymbol(loop),
		asm.JGE.Imm(asm.R3, int32(g.maps.cpus), done),
		asm.LoadMapPtr(asm.R1, 0).WithReference(mapName),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, int32(key)),
		asm.FnMapLookupPercpuElem.Call(),
		asm.JEq.Imm(asm.R0, 0, next),
	)
	switch agg {
	case types.AggMin, types.AggMax:
		// This CPU's [value, set]; skip it when unset, take it when it is
		// the first set or beats the result.
		take := g.label("cpu_take")
		g.emit(
			asm.LoadMem(asm.R1, asm.R0, 8, asm.DWord),
			asm.JEq.Imm(asm.R1, 0, next),
			asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
			asm.LoadMem(asm.R2, asm.RFP, acc+8, asm.DWord),
			asm.JEq.Imm(asm.R2, 0, take),
			asm.LoadMem(asm.R2, asm.RFP, acc, asm.DWord),
		)
		if agg == types.AggMin {
			g.emit(asm.JSGE.Reg(asm.R1, asm.R2, next))
		} else {
			g.emit(asm.JSLE.Reg(asm.R1, asm.R2, next))
		}
		g.emit(
			asm.StoreMem(asm.RFP, acc, asm.R1, asm.DWord).WithSymbol(take),
			asm.Mov.Imm(asm.R1, 1),
			asm.StoreMem(asm.RFP, acc+8, asm.R1, asm.DWord),
		)
	case types.AggAvg:
		// This CPU's [count, sum] added to the result's.
		for off := int16(0); off < 16; off += 8 {
			g.emit(
				asm.LoadMem(asm.R1, asm.R0, off, asm.DWord),
				asm.LoadMem(asm.R2, asm.RFP, acc+off, asm.DWord),
				asm.Add.Reg(asm.R2, asm.R1),
				asm.StoreMem(asm.RFP, acc+off, asm.R2, asm.DWord),
			)
		}
	default:
		g.emit(
			asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
			asm.LoadMem(asm.R2, asm.RFP, acc, asm.DWord),
			asm.Add.Reg(asm.R2, asm.R1),
			asm.StoreMem(asm.RFP, acc, asm.R2, asm.DWord),
		)
	}
	g.emit(
		asm.LoadMem(asm.R3, asm.RFP, cpu, asm.DWord).WithSymbol(next),
		asm.Add.Imm(asm.R3, 1),
		asm.StoreMem(asm.RFP, cpu, asm.R3, asm.DWord),
		asm.Ja.Label(loop),
		asm.LoadMem(asm.R0, asm.RFP, acc, asm.DWord).WithSymbol(done),
	)
	if agg == types.AggAvg {
		// The sum over the count, as bpftrace reads an avg(): 0 for none.
		// Unsigned division (signed is Linux 6.6's), a negative sum negated
		// around it.
		none, pos := g.label("avg_none"), g.label("avg_pos")
		g.emit(
			asm.JEq.Imm(asm.R0, 0, none),
			asm.LoadMem(asm.R1, asm.RFP, acc+8, asm.DWord),
			asm.JSGE.Imm(asm.R1, 0, pos),
			asm.Neg.Imm(asm.R1, 0),
			asm.Div.Reg(asm.R1, asm.R0),
			asm.Neg.Imm(asm.R1, 0),
			asm.Mov.Reg(asm.R0, asm.R1),
			asm.Ja.Label(none),
			asm.Div.Reg(asm.R1, asm.R0).WithSymbol(pos),
			asm.Mov.Reg(asm.R0, asm.R1),
		)
		g.mark(none)
	}
	return g.vs.push(asm.R0)
}

// mapReadInto copies a string or address element into the zeroed slot at;
// an absent element leaves it zero.
func (g *gen) mapReadInto(m *lang.MapExpr, at int16, size int) error {
	spec, key, err := g.elemKey(m)
	if err != nil {
		return err
	}
	absent := g.label("absent")
	g.lookup(spec.Name, key)
	g.emit(asm.JEq.Imm(asm.R0, 0, absent))
	for off := int16(0); off < int16(min(size, int(spec.ValueSize))); off += 8 {
		g.emit(asm.LoadMem(asm.R1, asm.R0, off, asm.DWord), asm.StoreMem(asm.RFP, at+off, asm.R1, asm.DWord))
	}
	g.mark(absent)
	return nil
}

// deleteElem compiles delete(@m[k...]).
func (g *gen) deleteElem(m *lang.MapExpr) error {
	spec, key, err := g.elemKey(m)
	if err != nil {
		return err
	}
	g.emit(
		asm.LoadMapPtr(asm.R1, 0).WithReference(spec.Name),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, int32(key)),
		asm.FnMapDeleteElem.Call(),
	)
	return nil
}

// elemCall pushes delete()'s or has_key()'s value: whether the element
// was there (and, for delete, is no longer).
func (g *gen) elemCall(c *lang.CallExpr) error {
	m, ok := c.Args[0].(*lang.MapExpr)
	if !ok {
		return unsupported(c, c.Name+"() of this argument")
	}
	if c.Name == "delete" && len(m.Keys) == 0 {
		// delete(@scalar) clears it, and says it did.
		if err := g.control(&Event{Kind: EventClearMap, Map: m.Name}); err != nil {
			return err
		}
		g.emit(asm.Mov.Imm(asm.R0, 1))
		return g.vs.push(asm.R0)
	}
	if c.Name == "delete" {
		if err := g.deleteElem(m); err != nil {
			return err
		}
		// bpf_map_delete_elem returns 0 where it deleted.
		yes, done := g.label("deleted"), g.label("delete")
		g.emit(asm.JEq.Imm(asm.R0, 0, yes), asm.Mov.Imm(asm.R0, 0), asm.Ja.Label(done),
			asm.Mov.Imm(asm.R0, 1).WithSymbol(yes))
		g.mark(done)
		return g.vs.push(asm.R0)
	}
	spec, key, err := g.elemKey(m)
	if err != nil {
		return err
	}
	g.lookup(spec.Name, key)
	none := g.label("nokey")
	g.emit(asm.JEq.Imm(asm.R0, 0, none), asm.Mov.Imm(asm.R0, 1))
	g.mark(none)
	return g.vs.push(asm.R0)
}

// scratchMap adds ScratchMap, or grows its value to size bytes: the
// scratch area of the programs compiled in scratch mode (scratch.go), one
// per-CPU value that every such program shares, each from its start.
func (ms *mapSet) scratchMap(size int) {
	size = max((size+7)&^7, 8)
	if s, ok := ms.specs[ScratchMap]; ok {
		s.ValueSize = max(s.ValueSize, uint32(size))
		return
	}
	ms.specs[ScratchMap] = &ebpf.MapSpec{Name: ScratchMap, Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: uint32(size), MaxEntries: 1}
}
