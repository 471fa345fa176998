package codegen

import (
	"fmt"
	"slices"

	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
)

// For loops (check/loop.go says which runs how). A range with constant
// ends is a loop in the program: a counter in a stack slot, compared with
// the end, the body, the counter increased, a jump back; the verifier
// walks it turn by turn, as it does bounded loops since Linux 5.3. A loop
// over a map, or over a range that is not constant, is a function the
// kernel calls for each element or turn (bpf_for_each_map_elem, 5.13;
// bpf_loop, 5.17), placed after the program's exit. Its context argument
// is the calling frame: the function copies in the variables its body
// uses (and the skb and function print() writes in its records' head),
// runs the body on its own frame, and copies them back out. The kernel
// checks the calling and the called frames together: their stacks share
// the 512 bytes.

// loopLabels are where break and continue go in the innermost loop.
type loopLabels struct {
	brk, cont string
}

// headSlots are, in a callback, the slots holding the skb and the
// function print() records (copied in from the caller; 0: none).
type headSlots struct {
	skb, fn int16
}

// Names of the head values among the copied variables: not a variable's.
const (
	headSkb  = "\x00skb"
	headFunc = "\x00func"
	rangeLo  = "\x00start"
)

func (g *gen) forStmt(s *lang.ForStmt) error {
	li := g.info.Loops[s]
	if li == nil {
		return unsupported(s, "this loop")
	}
	if !li.Callback {
		return g.inlineRange(s, li)
	}
	return g.callbackLoop(s)
}

// inlineRange compiles a range with constant ends in the program.
func (g *gen) inlineRange(s *lang.ForStmt, li *check.LoopInfo) error {
	count, err := g.frame.alloc(8)
	if err != nil {
		return err
	}
	v, err := g.frame.alloc(8)
	if err != nil {
		return err
	}
	restore := g.bindLoopVar(s, v)
	defer restore()
	top, next, done := g.label("for"), g.label("for_next"), g.label("for_done")
	g.storeConst(count, li.Start)
	g.emit(asm.LoadMem(asm.R0, asm.RFP, count, asm.DWord).WithSymbol(top))
	g.jumpCmp(asm.JSGE, asm.R0, li.Start+li.Count, done)
	g.emit(asm.StoreMem(asm.RFP, v, asm.R0, asm.DWord))
	outer := g.loop
	g.loop = &loopLabels{brk: done, cont: next}
	err = g.block(s.Body)
	g.loop = outer
	if err != nil {
		return err
	}
	g.emit(
		asm.LoadMem(asm.R0, asm.RFP, count, asm.DWord).WithSymbol(next),
		asm.Add.Imm(asm.R0, 1),
		asm.StoreMem(asm.RFP, count, asm.R0, asm.DWord),
		asm.Ja.Label(top),
	)
	g.mark(done)
	return nil
}

// storeConst writes the 64-bit n at the frame offset at.
func (g *gen) storeConst(at int16, n int64) {
	if fitsImm(n) {
		g.emit(storeImm64(at, int32(n)))
		return
	}
	g.emit(asm.LoadImm(asm.R0, n, asm.DWord), asm.StoreMem(asm.RFP, at, asm.R0, asm.DWord))
}

// bindLoopVar makes the loop's variable the slot at while its body is
// generated; restore undoes it.
func (g *gen) bindLoopVar(s *lang.ForStmt, at int16) (restore func()) {
	name := s.Var.Name
	old, had := g.vars[name]
	oldT, hadT := g.loopVars[name]
	g.vars[name] = at
	g.loopVars[name] = g.info.Types[s.Var]
	return func() {
		if had {
			g.vars[name] = old
		} else {
			delete(g.vars, name)
		}
		if hadT {
			g.loopVars[name] = oldT
		} else {
			delete(g.loopVars, name)
		}
	}
}

// whileStmt compiles bpftrace's while loop in the program: the verifier
// must see its condition end it.
func (g *gen) whileStmt(s *lang.WhileStmt) error {
	top, done := g.label("while"), g.label("while_done")
	g.mark(top)
	if err := g.branch(s.Cond, done, false); err != nil {
		return err
	}
	outer := g.loop
	g.loop = &loopLabels{brk: done, cont: top}
	err := g.block(s.Body)
	g.loop = outer
	if err != nil {
		return err
	}
	g.emit(asm.Ja.Label(top))
	g.mark(done)
	return nil
}

// unroll compiles bpftrace's unroll(n): the block n times.
func (g *gen) unroll(s *lang.UnrollStmt) error {
	n, ok := g.info.ConstInt(s.Count)
	if !ok {
		return unsupported(s.Count, "unroll without a constant count")
	}
	for range n {
		if err := g.block(s.Body); err != nil {
			return err
		}
	}
	return nil
}

// probeReturn ends the probe's action: the program's exit, or, in a
// loop's body the kernel calls, the way out that tells its caller to
// return too.
func (g *gen) probeReturn() {
	if g.retLabel != "" {
		g.emit(asm.Ja.Label(g.retLabel))
		return
	}
	g.emit(asm.Ja.Label(exitLabel))
}

// jump compiles break, continue and return.
func (g *gen) jump(s *lang.JumpStmt) error {
	if s.Op == "return" {
		g.probeReturn()
		return nil
	}
	if g.loop == nil {
		return unsupported(s, s.Op+" outside a loop")
	}
	to := g.loop.cont
	if s.Op == "break" {
		to = g.loop.brk
	}
	g.emit(asm.Ja.Label(to))
	return nil
}

// varType is the type of a variable of the probe or a loop in scope.
func (g *gen) varType(name string) (types.Type, bool) {
	if t, ok := g.loopVars[name]; ok {
		return t, true
	}
	t, ok := g.info.Vars[g.probe][name]
	return t, ok
}

// bodyVars are the variables a loop's body uses that the callback copies
// in and out: those of the probe and of the loops around it, not the
// loop's own nor those of loops inside it, in the order first used.
func (g *gen) bodyVars(s *lang.ForStmt) []string {
	inner := map[string]bool{s.Var.Name: true}
	lang.Inspect(s.Body, func(n lang.Node) bool {
		if f, ok := n.(*lang.ForStmt); ok {
			inner[f.Var.Name] = true
		}
		return true
	})
	var names []string
	lang.Inspect(s.Body, func(n lang.Node) bool {
		if v, ok := n.(*lang.VarExpr); ok && !inner[v.Name] && !slices.Contains(names, v.Name) {
			if _, known := g.varType(v.Name); known {
				names = append(names, v.Name)
			}
		}
		return true
	})
	return names
}

// prints reports whether a loop's body writes print() records, whose
// head has the skb and the function.
func prints(s *lang.ForStmt) bool {
	found := false
	lang.Inspect(s.Body, func(n lang.Node) bool {
		if c, ok := n.(*lang.CallExpr); ok && c.Name == "print" {
			found = true
		}
		return !found
	})
	return found
}

// returns reports whether a loop's body has a return.
func returns(s *lang.ForStmt) bool {
	found := false
	lang.Inspect(s.Body, func(n lang.Node) bool {
		if j, ok := n.(*lang.JumpStmt); ok && j.Op == "return" {
			found = true
		}
		return !found
	})
	return found
}

// copied is a value the callback copies in from its caller and back out:
// from the caller's slot to its own, size bytes.
type copied struct {
	name     string
	from, to int16
	size     int
}

// callbackLoop compiles a loop whose body the kernel calls: the call in
// the program, and the callback after it.
func (g *gen) callbackLoop(s *lang.ForStmt) error {
	if err := g.loopHelper(s); err != nil {
		return err
	}
	if g.maps.perf {
		return &spanError{span: s.At, msg: "this loop needs the ring buffer (Linux 5.8) for its body's records", hint: "a kernel with bpf_for_each_map_elem or bpf_loop has one; drop the option that asks for perf buffers"}
	}
	var copies []copied
	for _, name := range g.bodyVars(s) {
		t, _ := g.varType(name)
		slot, err := g.varSlot(name, SlotSize(t))
		if err != nil {
			return err
		}
		copies = append(copies, copied{name: name, from: slot, size: SlotSize(t)})
	}
	if prints(s) {
		skb, fn, err := g.headValues()
		if err != nil {
			return err
		}
		copies = append(copies, copied{name: headSkb, from: skb, size: 8}, copied{name: headFunc, from: fn, size: 8})
	}
	sym := g.label("loop_body")
	// A return in the body sets this flag in the caller's frame, which
	// returns in turn once the kernel is done calling.
	var retFlag int16
	if returns(s) {
		var err error
		if retFlag, err = g.frame.keep(8); err != nil {
			return err
		}
		g.emit(zero8(retFlag)...)
	}
	var count int16
	if s.Map == nil {
		// bpf_loop(end - start, body, frame, 0), nothing where end <= start;
		// the body is called with the turn's index, from 0.
		lo, err := g.frame.keep(8)
		if err != nil {
			return err
		}
		if err := g.expr(s.Start); err != nil {
			return err
		}
		g.vs.pop(asm.R0)
		g.emit(asm.StoreMem(asm.RFP, lo, asm.R0, asm.DWord))
		copies = append(copies, copied{name: rangeLo, from: lo, size: 8})
		if count, err = g.frame.alloc(8); err != nil {
			return err
		}
		if err := g.expr(s.End); err != nil {
			return err
		}
		g.vs.pop(asm.R0)
		g.emit(asm.LoadMem(asm.R1, asm.RFP, lo, asm.DWord), asm.Sub.Reg(asm.R0, asm.R1), asm.StoreMem(asm.RFP, count, asm.R0, asm.DWord))
	}
	cb, err := g.callback(s, sym, copies, retFlag)
	if err != nil {
		return err
	}
	defer g.afterCallback(retFlag)
	g.scratchBack(cb)
	*g.funcs = append(*g.funcs, cb.insns)
	g.calleeDepth = max(g.calleeDepth, stackDepth(cb))
	g.labels = cb.labels
	if total := stackDepth(g); total > frameSize {
		return stackSpanError{&spanError{span: s.At, msg: fmt.Sprintf("this loop and the probe around it need %d bytes of eBPF stack together, more than %d", total, frameSize),
			hint: "the kernel runs a loop's body on a stack of its own, counted with the probe's: use fewer or shorter variables (strings) in the probe or the loop"}}
	}
	funcPtr := asm.LoadImm(asm.R2, -1, asm.DWord)
	funcPtr.Src = asm.PseudoFunc
	if s.Map != nil {
		spec, err := g.maps.spec(g.maps.layout(s.Map.Name))
		if err != nil {
			return err
		}
		g.emit(
			asm.LoadMapPtr(asm.R1, 0).WithReference(spec.Name),
			funcPtr.WithReference(sym),
			asm.Mov.Reg(asm.R3, asm.RFP),
			asm.Mov.Imm(asm.R4, 0),
			asm.FnForEachMapElem.Call(),
		)
		return nil
	}
	skip := g.label("loop_none")
	g.emit(
		asm.LoadMem(asm.R1, asm.RFP, count, asm.DWord),
		asm.JSLE.Imm(asm.R1, 0, skip),
		funcPtr.WithReference(sym),
		asm.Mov.Reg(asm.R3, asm.RFP),
		asm.Mov.Imm(asm.R4, 0),
		asm.FnLoop.Call(),
	)
	g.mark(skip)
	return nil
}

// loopHelper reports a loop whose helper the kernel lacks, at the loop.
func (g *gen) loopHelper(s *lang.ForStmt) error {
	have := g.maps.haveHelper
	switch {
	case s.Map != nil && have != nil && !have(asm.FnForEachMapElem):
		return &spanError{span: s.At, msg: "this kernel lacks bpf_for_each_map_elem (Linux 5.13), which a loop over a map runs with",
			hint: "print the map with print(" + "@" + s.Map.Name + "), or read the keys you know: @" + s.Map.Name + "[key]"}
	case s.Map == nil && have != nil && !have(asm.FnLoop):
		return &spanError{span: s.At, msg: "this kernel lacks bpf_loop (Linux 5.17), which a loop over a range that is not constant runs with",
			hint: fmt.Sprintf("make both ends constants at most %d apart, for ($i : 0..16): such a loop runs in the program itself", check.InlineRange)}
	}
	return nil
}

// headValues are the slots holding the skb and the function a print()
// record's head has: a callback's own copies, or, in the program, the
// values computed into slots of their own.
func (g *gen) headValues() (skb, fn int16, err error) {
	if g.head != nil {
		return g.head.skb, g.head.fn, nil
	}
	if skb, err = g.frame.keep(8); err != nil {
		return 0, 0, err
	}
	if fn, err = g.frame.keep(8); err != nil {
		return 0, 0, err
	}
	if err := g.headSkb(); err != nil {
		return 0, 0, err
	}
	g.emit(asm.StoreMem(asm.RFP, skb, asm.R0, asm.DWord), asm.Mov.Imm(asm.R0, 0))
	if g.info.Probes[g.probe].Func {
		if err := g.funcIP(); err != nil {
			return 0, 0, err
		}
	}
	g.emit(asm.StoreMem(asm.RFP, fn, asm.R0, asm.DWord))
	return skb, fn, nil
}

// stackDepth is the stack a function and the callbacks it calls need, as
// the verifier counts it: each frame rounded up to 32 bytes.
func stackDepth(g *gen) int {
	return (max(g.frame.high, 1)+31)&^31 + g.calleeDepth
}

// callback generates a loop's body as a function: R1-R4 are, for a map,
// the map, the key, the value and the caller's frame; for bpf_loop, the
// turn's index and the caller's frame.
func (g *gen) callback(s *lang.ForStmt, sym string, copies []copied, retFlag int16) (*gen, error) {
	cb := &gen{noOne: g.noOne, info: g.info, maps: g.maps, out: g.out, probe: g.probe, spec: g.spec, ctx: g.ctx,
		vars: map[string]int16{}, loopVars: maps2(g.loopVars), labels: g.labels, skbArg: g.skbArg, target: g.target,
		ksym: g.ksym, mapOf: map[*lang.CallExpr]string{}, funcAddr: g.funcAddr, funcs: g.funcs, head: &headSlots{}}
	cb.vs.g = cb
	cb.scratchFrom(g)
	frameArg, index := asm.R4, asm.R1
	if s.Map == nil {
		frameArg = asm.R2
	}
	caller, err := cb.frame.keep(8)
	if err != nil {
		return nil, err
	}
	ret, err := cb.frame.keep(8)
	if err != nil {
		return nil, err
	}
	v, err := cb.frame.keep(SlotSize(g.info.Types[s.Var]))
	if err != nil {
		return nil, err
	}
	cb.emit(asm.StoreMem(asm.RFP, caller, frameArg, asm.DWord).WithSymbol(sym))
	if s.Map != nil {
		if err := cb.scratchStart(true); err != nil {
			return nil, err
		}
		if err := cb.mapElem(s, v); err != nil {
			return nil, err
		}
	} else {
		cb.emit(asm.StoreMem(asm.RFP, v, index, asm.DWord))
		if err := cb.scratchStart(false); err != nil {
			return nil, err
		}
	}
	for i, c := range copies {
		if isScratch(int64(c.from)) {
			// The caller's slot in the scratch area, which the body
			// shares: used in place, not copied.
			copies[i].to = c.from
			cb.vars[c.name] = c.from
			continue
		}
		to, err := cb.frame.keep(c.size)
		if err != nil {
			return nil, err
		}
		copies[i].to = to
		switch c.name {
		case headSkb:
			cb.head.skb = to
		case headFunc:
			cb.head.fn = to
		case rangeLo:
		default:
			cb.vars[c.name] = to
		}
	}
	cb.copyVars(caller, copies, true)
	if s.Map == nil {
		// $i = start + index
		lo := copies[slices.IndexFunc(copies, func(c copied) bool { return c.name == rangeLo })].to
		cb.emit(
			asm.LoadMem(asm.R0, asm.RFP, v, asm.DWord),
			asm.LoadMem(asm.R1, asm.RFP, lo, asm.DWord),
			asm.Add.Reg(asm.R0, asm.R1),
			asm.StoreMem(asm.RFP, v, asm.R0, asm.DWord),
		)
	}
	cb.varsAt = len(cb.insns)
	cb.bindLoopVar(s, v)
	brk, cont, out := cb.label("loop_break"), cb.label("loop_next"), cb.label("loop_out")
	cb.loop = &loopLabels{brk: brk, cont: cont}
	if retFlag != 0 {
		cb.retLabel = cb.label("loop_return")
	}
	if err := cb.block(s.Body); err != nil {
		return nil, err
	}
	// The next element (or turn): 0; break: 1, which ends the loop; return
	// ends it too, and sets the caller's flag.
	cb.emit(asm.Mov.Imm(asm.R0, 0).WithSymbol(cont), asm.Ja.Label(out))
	if retFlag != 0 {
		cb.emit(
			asm.LoadMem(asm.R1, asm.RFP, caller, asm.DWord).WithSymbol(cb.retLabel),
			asm.Mov.Imm(asm.R0, 1),
			asm.StoreMem(asm.R1, retFlag, asm.R0, asm.DWord),
			asm.Ja.Label(brk),
		)
	}
	cb.emit(asm.Mov.Imm(asm.R0, 1).WithSymbol(brk))
	cb.emit(asm.StoreMem(asm.RFP, ret, asm.R0, asm.DWord).WithSymbol(out))
	cb.copyVars(caller, copies, false)
	cb.emit(asm.LoadMem(asm.R0, asm.RFP, ret, asm.DWord), asm.Return())
	cb.insns = cb.endScratch(dropUnreachable(peephole(cb.insns)))
	if s.Map != nil {
		cb.insns[0] = withFuncInfo(cb.insns[0], sym, "map", "key", "value", "ctx")
	} else {
		cb.insns[0] = withFuncInfo(cb.insns[0], sym, "index", "ctx")
	}
	return cb, nil
}

// maps2 copies a map of loop variables' types.
func maps2(m map[string]types.Type) map[string]types.Type {
	out := make(map[string]types.Type, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// copyVars copies the values between the caller's frame (its address at
// the slot caller) and the callback's: in, or back out.
func (g *gen) copyVars(caller int16, copies []copied, in bool) {
	if len(copies) == 0 {
		return
	}
	g.emit(asm.LoadMem(asm.R1, asm.RFP, caller, asm.DWord))
	for _, c := range copies {
		if c.name == rangeLo && !in || isScratch(int64(c.from)) {
			continue
		}
		for off := int16(0); off < int16(c.size); off += 8 {
			if in {
				g.emit(asm.LoadMem(asm.R0, asm.R1, c.from+off, asm.DWord), asm.StoreMem(asm.RFP, c.to+off, asm.R0, asm.DWord))
			} else {
				g.emit(asm.LoadMem(asm.R0, asm.RFP, c.to+off, asm.DWord), asm.StoreMem(asm.R1, c.from+off, asm.R0, asm.DWord))
			}
		}
	}
}

// mapElem writes a map loop's (key, value) at v from the element the
// kernel passes: the key as the map keeps it (R2), then the value (R3);
// a per-CPU aggregation's value combined over the CPUs, as reading it
// does.
func (g *gen) mapElem(s *lang.ForStmt, v int16) error {
	l := g.maps.layout(s.Map.Name)
	keyBytes := l.KeySize
	for off := int16(0); off < int16(keyBytes); off += 8 {
		g.emit(asm.LoadMem(asm.R0, asm.R2, off, asm.DWord), asm.StoreMem(asm.RFP, v+off, asm.R0, asm.DWord))
	}
	val := v + int16(keyBytes)
	if l.Value.Kind == types.Agg {
		// The kernel passes this CPU's value: the loop reads all of them.
		spec, err := g.maps.spec(l)
		if err != nil {
			return err
		}
		if err := g.perCPURead(spec.Name, v, l.Value.Agg); err != nil {
			return err
		}
		g.vs.pop(asm.R0)
		g.emit(asm.StoreMem(asm.RFP, val, asm.R0, asm.DWord))
		return nil
	}
	for off := int16(0); off < int16(SlotSize(l.Value)); off += 8 {
		g.emit(asm.LoadMem(asm.R0, asm.R3, off, asm.DWord), asm.StoreMem(asm.RFP, val+off, asm.R0, asm.DWord))
	}
	return nil
}

// Loop bodies the kernel calls make a program of several functions, which
// the kernel takes only with BTF's description of each (func_info): their
// prototypes, which the verifier does not check for static functions.
var (
	btfLong    = &btf.Int{Name: "long", Size: 8, Encoding: btf.Signed}
	btfVoidPtr = &btf.Pointer{Target: &btf.Void{}}
)

// withFuncInfo describes the function that starts at ins, name taking
// params pointers, for the program's func_info.
func withFuncInfo(ins asm.Instruction, name string, params ...string) asm.Instruction {
	proto := &btf.FuncProto{Return: btfLong}
	for _, p := range params {
		proto.Params = append(proto.Params, btf.FuncParam{Name: p, Type: btfVoidPtr})
	}
	return btf.WithFuncMetadata(ins, &btf.Func{Name: name, Type: proto, Linkage: btf.StaticFunc})
}

// afterCallback follows a loop's call: where the body returned (its flag
// set), the caller returns too.
func (g *gen) afterCallback(retFlag int16) {
	if retFlag == 0 {
		return
	}
	goOn := g.label("loop_returned")
	g.emit(asm.LoadMem(asm.R0, asm.RFP, retFlag, asm.DWord), asm.JEq.Imm(asm.R0, 0, goOn))
	g.probeReturn()
	g.mark(goOn)
}
