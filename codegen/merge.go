package codegen

import (
	"slices"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/lang"
)

// Probes on one attach point (the same tracepoint, function, BEGIN, END,
// interval, or skb: glob and argument shape) share a program: it runs each
// probe's code, compiled as before, one after the other in script order,
// where a probe's return goes on to the next probe. The kernel then runs one
// program an event where it ran one per probe, and the script holds one
// program's file descriptor and link where it held one per probe.
//
// The probes' code is put one after the other in one function, not called
// as BPF-to-BPF functions: the kernel compiles each function as a program
// of its own (its JIT image, its symbol), which cost as much as the
// programs saved. The context, which each probe's code takes in R1, is
// kept in a stack slot below every probe's frame.
//
// A merged program stays within what the kernel takes of one program: its
// maps (maxProgMaps), its functions (maxSubprogs: loop callbacks), the
// stack (frameSize: the probes' frames and the context's slot, and the
// callbacks' frames on top), and a size (maxMergedInsns); a group that
// does not fit is split into several programs, each of probes next to
// each other in script order, so the kernel still runs them in that order.

const (
	// maxSubprogs is the kernel's limit on the functions of one program
	// (BPF_MAX_SUBPROGS), the main one included.
	maxSubprogs = 256
	// maxMergedInsns bounds a merged program's instructions. The kernel
	// patches a program's instructions in places (helper calls, map
	// accesses), each time moving the jumps of the whole program: loading
	// costs more than in proportion to a program's size. It is also far
	// below the 1,000,000 instructions the verifier may process, as a
	// probe's code may be processed more than once (branches); where the
	// verifier still refuses a merged program, the runtime loads its
	// probes' own programs instead (Program.Merged).
	maxMergedInsns = 1024
)

// Probes is the number of the script's probes this program runs.
func (p *Program) Probes() int {
	return max(len(p.Merged), 1)
}

// mergeSameAttach replaces the probes' programs that share an attach point
// by merged programs, each at its first probe's place.
func mergeSameAttach(progs []*Program) []*Program {
	groups := map[attachPoint][]int{}
	for i, p := range progs {
		if k, ok := attachKey(p); ok {
			groups[k] = append(groups[k], i)
		}
	}
	// chunkAt[i] is the chunk of probes whose merged program takes the
	// place of progs[i]; skip marks the places of its other probes.
	chunkAt := map[int][]*Program{}
	skip := make([]bool, len(progs))
	for _, idx := range groups {
		if len(idx) < 2 {
			continue
		}
		for _, c := range chunks(progs, idx) {
			if len(c) < 2 {
				continue
			}
			chunkAt[c[0]] = nil
			for _, i := range c {
				chunkAt[c[0]] = append(chunkAt[c[0]], progs[i])
				skip[i] = i != c[0]
			}
		}
	}
	if len(chunkAt) == 0 {
		return progs
	}
	out := make([]*Program, 0, len(progs))
	for i, p := range progs {
		switch {
		case skip[i]:
		case chunkAt[i] != nil:
			out = append(out, merge(chunkAt[i]))
		default:
			out = append(out, p)
		}
	}
	return out
}

// attachPoint says where a program attaches: programs with the same one
// run on the same events, with the same context.
type attachPoint struct {
	kind                           lang.ProbeKind
	typ                            ebpf.ProgramType
	attachType                     ebpf.AttachType
	attachTo, tracepoint, function string
	skbArg, reasonArg              int
	hasReason, ret, cookie         bool
	retClass                       RetClass
	period, hz                     uint64
	// target is an skb: or skbret: glob, whose functions the runtime finds
	// for a kprobe-form program by it; binary, fn and offset a uprobe's
	// (offset also kprobe:FN+OFFSET's).
	target, binary, fn string
	offset             uint64
	functions          string
}

// attachKey is a program's attach point. Helpers (track(), skbret:'s
// entries) are not the script's probes and are left alone.
func attachKey(p *Program) (attachPoint, bool) {
	if p.Helper != "" || p.Spec == nil || p.Prog == nil || p.BPF != nil {
		// A bpf: program's attach point is its target program, which
		// AttachTo does not say.
		return attachPoint{}, false
	}
	s := p.Spec
	k := attachPoint{kind: s.Spec.Kind, typ: p.Prog.Type, attachType: p.Prog.AttachType, attachTo: p.Prog.AttachTo,
		tracepoint: p.Tracepoint, function: p.Function, skbArg: p.SkbArg, reasonArg: p.ReasonArg, hasReason: p.HasReason, cookie: p.Cookie,
		ret: p.Return, retClass: p.Ret, period: s.Spec.Period, hz: s.Spec.Hz}
	switch s.Spec.Kind {
	case lang.ProbeSkb, lang.ProbeSkbRet:
		k.target = s.Spec.Target
	case lang.ProbeUprobe, lang.ProbeUretprobe:
		k.binary, k.fn, k.offset = s.Binary, s.Func, s.FileOffset
	case lang.ProbeKprobe:
		// kprobe:FN+OFFSET fires elsewhere than kprobe:FN.
		k.offset = s.Spec.Offset
	case lang.ProbeTest, lang.ProbeBench:
		// Each test and bench runs, and is reported, on its own.
		k.fn = s.Spec.Name
	}
	if len(p.Functions) > 0 {
		k.functions = strings.Join(p.Functions, "|")
	}
	return k, true
}

// chunks splits a group of programs (their places in progs, in script
// order) into runs that one program can hold. A probe that cannot share a
// program (its frame leaves no room for the context's slot) is a run of
// its own.
func chunks(progs []*Program, idx []int) [][]int {
	var out [][]int
	var cur []int
	var maps map[string]bool
	var funcs, insns, frame, callee int
	var used []string
	flush := func() {
		if len(cur) > 0 {
			out = append(out, cur)
		}
		cur, maps, funcs, insns, frame, callee = nil, map[string]bool{}, 1, 0, 0, 0
	}
	flush()
	for _, i := range idx {
		p := progs[i]
		if mergedStack(p.frame, p.callee) > frameSize {
			flush()
			out = append(out, []int{i})
			continue
		}
		used = mapRefs(used[:0], p.Prog.Instructions)
		added := 0
		for _, m := range used {
			if !maps[m] {
				added++
			}
		}
		nf, ni := functions(p.Prog.Instructions)-1, len(p.Prog.Instructions)+2
		if len(cur) > 0 && (len(maps)+added > maxProgMaps || funcs+nf > maxSubprogs || insns+ni > maxMergedInsns ||
			mergedStack(max(frame, p.frame), max(callee, p.callee)) > frameSize) {
			flush()
		}
		cur = append(cur, i)
		for _, m := range used {
			maps[m] = true
		}
		funcs += nf
		insns += ni
		frame, callee = max(frame, p.frame), max(callee, p.callee)
	}
	flush()
	return out
}

// mapRefs appends the maps insns load to refs, each once.
func mapRefs(refs []string, insns asm.Instructions) []string {
	for _, ins := range insns {
		if ins.IsLoadFromMap() {
			if ref := ins.Reference(); !slices.Contains(refs, ref) {
				refs = append(refs, ref)
			}
		}
	}
	return refs
}

// ctxSlot is where a merged program keeps the context: below the largest
// of its probes' frames.
func ctxSlot(frame int) int16 {
	return int16(-((frame+7)&^7 + 8))
}

// mergedStack is the stack a merged program needs, as the verifier counts
// it: its frame, the probes' and the context's slot, rounded up to 32
// bytes, and the callbacks' frames on top.
func mergedStack(frame, callee int) int {
	return (-int(ctxSlot(frame))+31)&^31 + callee
}

// functions counts the functions of a program's instructions: the main
// one, and the loop callbacks after it.
func functions(insns asm.Instructions) int {
	n := 0
	for _, ins := range insns {
		if btf.FuncMetadata(&ins) != nil {
			n++
		}
	}
	return max(n, 1)
}

// mainLen is how many of a program's instructions are its main function's:
// those before its first callback.
func mainLen(insns asm.Instructions) int {
	for i := 1; i < len(insns); i++ {
		if btf.FuncMetadata(&insns[i]) != nil {
			return i
		}
	}
	return len(insns)
}

// merge builds the program that runs probes' code one after the other. It
// keeps the context in a stack slot, and loads it into R1 before each
// probe's code; a probe's exit jumps to the next probe's start. The stop
// gate is read once, at the start, and dropped from each probe's code.
// The probes' loop callbacks follow, as they are. Each probe's program
// keeps where its code lies (Unmerge), not a copy of it.
func merge(members []*Program) *Program {
	first := members[0]
	name := "m_" + first.Name
	withInfo, gate := false, false
	n, frame, callee := 8, 0, 0
	for _, m := range members {
		withInfo = withInfo || functions(m.Prog.Instructions) > 1 || btf.FuncMetadata(&m.Prog.Instructions[0]) != nil
		gate = gate || readsStopGate(m.Prog.Instructions)
		n += len(m.Prog.Instructions) + 1
		frame, callee = max(frame, m.frame), max(callee, m.callee)
	}
	slot := ctxSlot(frame)
	ps := *first.Prog
	ps.Name = name
	insns := make(asm.Instructions, 0, n)
	if gate {
		insns = append(insns, gateCode(name+":run")...)
	}
	insns = append(insns, asm.StoreMem(asm.RFP, slot, asm.R1, asm.DWord).WithSymbol(name+":run"))
	codes := make([]asm.Instructions, len(members))
	for i, m := range members {
		next := nextLabel(name, members, i)
		code := stripStopGate(m.Prog.Instructions)
		codes[i] = code
		main := mainLen(code)
		insns = append(insns, asm.LoadMem(asm.R1, asm.RFP, slot, asm.DWord).WithSymbol(m.Name+":"))
		at := len(insns)
		insns = appendRenamed(insns, code[:main], m.Name+".")
		if btf.FuncMetadata(&insns[at]) != nil {
			// Not a function's start any more: the program's is.
			insns[at] = btf.WithFuncMetadata(insns[at], nil)
		}
		if last := len(insns) - 1; last > at && insns[last].OpCode.JumpOp() == asm.Exit && insns[last].Symbol() == "" {
			// The next probe's code follows: no jump (the verifier would
			// remove it, moving every jump of the program).
			insns = insns[:last]
		}
		for j := at; j < len(insns); j++ {
			if insns[j].OpCode.JumpOp() == asm.Exit {
				ja := asm.Ja.Label(next)
				ja.Metadata = insns[j].Metadata
				insns[j] = ja.WithReference(next)
			}
		}
		m.span = mergedSpan{at: at, end: len(insns)}
	}
	insns = append(insns,
		asm.Mov.Imm(asm.R0, 0).WithSymbol(name+":end"),
		asm.Return(),
	)
	for i, m := range members {
		code := codes[i]
		main := mainLen(code)
		m.span.cb = len(insns)
		insns = appendRenamed(insns, code[main:], m.Name+".")
		m.span.cbEnd = len(insns)
		m.span.gate = gate
		m.Prog = nil
	}
	if withInfo {
		insns[0] = withFuncInfo(insns[0], funcName(name), "ctx")
	}
	ps.Instructions = insns
	p := *first
	p.Name, p.Prog, p.Merged = name, &ps, members
	p.frame, p.callee = -int(slot), callee
	return &p
}

// gateCode is the stop gate as the merged program reads it: on to run
// where StopMap is not set, else return.
func gateCode(run string) asm.Instructions {
	return asm.Instructions{
		asm.LoadMapValue(asm.R0, 0, 0).WithReference(StopMap),
		asm.LoadMem(asm.R0, asm.R0, 0, asm.Word),
		asm.JEq.Imm(asm.R0, 0, run),
		asm.Mov.Imm(asm.R0, 0),
		asm.Return(),
	}
}

// nextLabel is where probe i of a merged program goes on at its exit.
func nextLabel(name string, members []*Program, i int) string {
	if i+1 < len(members) {
		return members[i+1].Name + ":"
	}
	return name + ":end"
}

// mergedSpan is where a probe's code lies in the merged program: its main
// part from at to end, its callbacks from cb to cbEnd; gate says the
// merged program reads the stop gate, which the probe's code then lacks.
type mergedSpan struct {
	at, end, cb, cbEnd int
	gate               bool
}

// Unmerge rebuilds a merged program's probes' own programs from its code,
// each loaded as the merged one would be (its type, attach type and
// target): where the kernel refuses the merged program, the runtime loads
// these instead. Each probe's exit returns again, and reads the stop gate
// first where the merged program did.
func (p *Program) Unmerge() []*Program {
	out := make([]*Program, len(p.Merged))
	for i, m := range p.Merged {
		next := nextLabel(p.Name, p.Merged, i)
		code := p.Prog.Instructions
		main, cbs := code[m.span.at:m.span.end], code[m.span.cb:m.span.cbEnd]
		insns := make(asm.Instructions, 0, len(main)+len(cbs)+5)
		if m.span.gate {
			run := main[0].Symbol()
			if run == "" {
				run = m.Name + ":"
			}
			insns = append(insns, gateCode(run)...)
		}
		at := len(insns)
		for _, ins := range main {
			if ins.OpCode.JumpOp() == asm.Ja && ins.Reference() == next {
				ret := asm.Return()
				if sym := ins.Symbol(); sym != "" {
					ret = ret.WithSymbol(sym)
				}
				ins = ret
			}
			insns = append(insns, ins)
		}
		if l := insns[len(insns)-1]; l.OpCode.JumpOp() != asm.Exit && l.OpCode.JumpOp() != asm.Ja {
			// The merged program went on to the next probe here.
			insns = append(insns, asm.Return())
		}
		if insns[at].Symbol() == "" {
			insns[at] = insns[at].WithSymbol(m.Name + ":")
		}
		insns = append(insns, cbs...)
		if len(cbs) > 0 {
			insns[0] = withFuncInfo(insns[0], funcName(m.Name), "ctx")
		}
		c := *m
		ps := *p.Prog
		ps.Name, ps.Instructions = m.Name, insns
		c.Prog = &ps
		c.span = mergedSpan{}
		out[i] = &c
	}
	return out
}

// funcName is a program's name as BTF takes a function's: letters, digits
// and _.
func funcName(name string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' {
			return r
		}
		return '_'
	}, name)
}

// appendRenamed appends insns to out with their labels, and the jumps,
// calls and callback addresses that name them, prefixed: each probe's code
// keeps its own labels (exit, body_1...) in a program that holds many. Map
// references are left as they are.
func appendRenamed(out, insns asm.Instructions, prefix string) asm.Instructions {
	for _, ins := range insns {
		if sym := ins.Symbol(); sym != "" {
			ins = ins.WithSymbol(prefix + sym)
			if fn := btf.FuncMetadata(&ins); fn != nil && fn.Name != "" {
				c := *fn
				c.Name = funcName(prefix + fn.Name)
				ins = btf.WithFuncMetadata(ins, &c)
			}
		}
		if ref := ins.Reference(); ref != "" && localRef(ins) {
			ins = ins.WithReference(prefix + ref)
		}
		out = append(out, ins)
	}
	return out
}

// localRef reports whether an instruction's reference names a label of the
// program: a jump, a BPF-to-BPF call, or a callback's address; not a map,
// a helper or a kernel function.
func localRef(ins asm.Instruction) bool {
	if ins.IsFunctionReference() || ins.IsFunctionCall() {
		return true
	}
	return ins.OpCode.Class().IsJump() && !ins.IsBuiltinCall() && !ins.IsKfuncCall() && ins.OpCode.JumpOp() != asm.Call
}

// readsStopGate reports whether a program reads the stop gate.
func readsStopGate(insns asm.Instructions) bool {
	for _, ins := range insns {
		if ins.Reference() == StopMap {
			return true
		}
	}
	return false
}

// stripStopGate drops a probe's stop gate (stopGate: three instructions,
// after the context's copy if any) where it is as generated, with no label
// on it: the merged program reads it once. The first instruction's
// function description moves to the new first.
func stripStopGate(insns asm.Instructions) asm.Instructions {
	for at := 0; at <= 1 && at+3 <= len(insns); at++ {
		g := insns[at : at+3]
		if g[0].Reference() != StopMap || !g[0].IsLoadFromMap() ||
			g[1].OpCode != asm.LoadMem(asm.R0, asm.R0, 0, asm.Word).OpCode || g[1].Dst != asm.R0 || g[1].Src != asm.R0 ||
			g[2].OpCode.JumpOp() != asm.JNE || g[2].Dst != asm.R0 || g[2].Constant != 0 ||
			g[1].Symbol() != "" || g[2].Symbol() != "" || (at == 1 && g[0].Symbol() != "") {
			continue
		}
		out := make(asm.Instructions, 0, len(insns)-3)
		out = append(out, insns[:at]...)
		out = append(out, insns[at+3:]...)
		if at == 0 {
			// The function's description and label go with its first
			// instruction.
			if fn := btf.FuncMetadata(&insns[0]); fn != nil {
				out[0] = btf.WithFuncMetadata(out[0], fn)
			}
			if sym := insns[0].Symbol(); sym != "" {
				if out[0].Symbol() != "" {
					return insns
				}
				out[0] = out[0].WithSymbol(sym)
			}
		}
		return out
	}
	return insns
}
