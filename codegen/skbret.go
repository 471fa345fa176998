package codegen

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/lang"
)

// The return side of skb: probes (skbret:GLOB). An entry program on every
// function an skbret: glob matches pushes the skb and the time on a small
// stack in EntryMap, keyed by the task (the CPU where there is none: idle
// tasks all have pid 0) and the function; the return program pops them,
// so the skb fields and duration work where the arguments are gone
// (kretprobes, kprobe-multi returns). The stack pairs the calls of a
// function that runs again inside itself on one task (loopback: the
// receive of a packet runs in its sender's ip_output, whose ICMP error
// goes through ip_output again); past entryDepth deep, the returns of the
// calls deeper are not reported.

// EntryMap is where entry programs stash the skb and the time at entry.
const EntryMap = "skbret_entry"

// entryMapSize bounds the tasks and functions in flight; an LRU map
// forgets those of returns never seen (a function whose return refused to
// attach). entryDepth is how deep a function's calls nest on one task and
// are still paired: each entry's value is a count, then entryDepth frames
// of the skb and the time and, where the kernel lacks bpf_get_func_ip, the
// function's address (stashFunc). entryFrame* are each field's offset from
// the value's start for frame 0.
const (
	entryMapSize   = 16384
	entryDepth     = 8
	entryFrameSkb  = 8
	entryFrameNs   = 16
	entryFrameFunc = 24
)

// entryFrame is the size of a frame in EntryMap's values, and entryValue
// that of a value: a count, then entryDepth frames.
func (ms *mapSet) entryFrame() int32 {
	if ms.noFuncIP() {
		return entryFrameFunc + 8 - entryFrameSkb
	}
	return entryFrameNs + 8 - entryFrameSkb
}

func (ms *mapSet) entryValue() int { return 8 + int(ms.entryFrame())*entryDepth }

// frameAt turns the frame index in r into its offset in the value.
func (g *gen) frameAt(r asm.Register) {
	if f := g.maps.entryFrame(); f == 16 {
		g.emit(asm.LSh.Imm(r, 4))
	} else {
		g.emit(asm.Mul.Imm(r, f))
	}
}

// HelperEntry marks the entry programs skbret: probes add.
const HelperEntry = "entry"

func (ms *mapSet) entryMap() {
	if _, ok := ms.specs[EntryMap]; !ok {
		ms.specs[EntryMap] = &ebpf.MapSpec{Name: EntryMap, Type: ebpf.LRUHash, KeySize: 16, ValueSize: uint32(ms.entryValue()), MaxEntries: entryMapSize}
	}
}

// entryKey writes the 16-byte EntryMap key at key: the thread id, or the
// CPU with bit 32 set where the thread id is 0, then the function address
// (0 where the frames keep it: the calls on a task return in the reverse
// order of their entries).
func (g *gen) entryKey(key int16) error {
	task := g.label("task")
	g.emit(
		asm.FnGetCurrentPidTgid.Call(),
		asm.Mov.Reg32(asm.R0, asm.R0),
		asm.JNE.Imm(asm.R0, 0, task),
		asm.FnGetSmpProcessorId.Call(),
		asm.Mov.Imm(asm.R1, 1),
		asm.LSh.Imm(asm.R1, 32),
		asm.Or.Reg(asm.R0, asm.R1),
	)
	g.emit(asm.StoreMem(asm.RFP, key, asm.R0, asm.DWord).WithSymbol(task))
	if g.stashFunc() {
		g.emit(storeImm64(key+8, 0))
		return nil
	}
	if err := g.funcIP(); err != nil {
		return err
	}
	g.emit(asm.StoreMem(asm.RFP, key+8, asm.R0, asm.DWord))
	return nil
}

// returnPrologue starts a return program: it takes the entry's skb and
// time out of EntryMap into kept slots; without an entry the event ends.
func (g *gen) returnPrologue() error {
	g.maps.entryMap()
	key, err := g.frame.keep(16)
	if err != nil {
		return err
	}
	stash := g.stashFunc()
	slot, err := g.frame.keep(16)
	if err != nil {
		return err
	}
	g.entrySkb, g.entryTime = slot, slot+8
	if err := g.entryKey(key); err != nil {
		return err
	}
	if stash {
		// The function, kept in the frame: after the key, which is made
		// with funcIP.
		if g.entryFunc, err = g.frame.keep(8); err != nil {
			return err
		}
	}
	g.lookup(EntryMap, key)
	// Pop the innermost frame: count-1, read where it was kept.
	g.emit(
		asm.JEq.Imm(asm.R0, 0, exitLabel),
		asm.LoadMem(asm.R1, asm.R0, 0, asm.Word),
		asm.JEq.Imm(asm.R1, 0, exitLabel),
		asm.Sub.Imm(asm.R1, 1),
		asm.StoreMem(asm.R0, 0, asm.R1, asm.Word),
		asm.JGE.Imm(asm.R1, entryDepth, exitLabel),
	)
	g.frameAt(asm.R1)
	g.emit(
		asm.Add.Reg(asm.R0, asm.R1),
		asm.LoadMem(asm.R1, asm.R0, entryFrameSkb, asm.DWord),
		asm.StoreMem(asm.RFP, g.entrySkb, asm.R1, asm.DWord),
		asm.LoadMem(asm.R1, asm.R0, entryFrameNs, asm.DWord),
		asm.StoreMem(asm.RFP, g.entryTime, asm.R1, asm.DWord),
	)
	if stash {
		g.emit(
			asm.LoadMem(asm.R1, asm.R0, entryFrameFunc, asm.DWord),
			asm.StoreMem(asm.RFP, g.entryFunc, asm.R1, asm.DWord),
		)
	}
	return nil
}

// retval reads the return value into R0, as the function's class says:
// sign- or zero-extended from its width; 0 for void.
func (g *gen) skbRetval() error {
	tg := g.target
	if tg.Ret.Size == 0 {
		g.emit(asm.Mov.Imm(asm.R0, 0))
		return nil
	}
	if g.ctx == ctxRegs {
		if err := g.loadRet(asm.R0); err != nil {
			return err
		}
	} else {
		g.emit(asm.LoadMem(asm.R0, asm.R9, int16(8*tg.NArgs), asm.DWord))
	}
	if tg.Ret.Size < 8 {
		shift := int32(64 - 8*int(tg.Ret.Size))
		g.emit(asm.LSh.Imm(asm.R0, shift))
		if tg.Ret.Signed {
			g.emit(asm.ArSh.Imm(asm.R0, shift))
		} else {
			g.emit(asm.RSh.Imm(asm.R0, shift))
		}
	}
	return nil
}

// compileEntry generates an entry program: for the kprobe form, one per
// skb position, attached to every function of the skbret: globs whose skb
// is there; with fentry, one per function.
func compileEntry(ms *mapSet, tg SkbTarget, name string, ksym func(string) uint64) (*Program, error) {
	ms.entryMap()
	g := &gen{maps: ms, skbArg: tg.SkbArg, target: tg, vars: map[string]int16{}}
	if tg.Fentry && ksym != nil {
		g.funcAddr = ksym(tg.Name)
	}
	g.vs.g = g
	ps := &ebpf.ProgramSpec{Name: name, License: "GPL", Type: ebpf.Kprobe}
	g.ctx = ctxRegs
	if tg.Fentry {
		g.ctx = ctxArgs
		ps.Type, ps.AttachType, ps.AttachTo = ebpf.Tracing, ebpf.AttachTraceFEntry, tg.Name
	}
	key, err := g.frame.keep(16)
	if err != nil {
		return nil, err
	}
	skb, err := g.frame.keep(8)
	if err != nil {
		return nil, err
	}
	val, err := g.frame.keep(ms.entryValue())
	if err != nil {
		return nil, err
	}
	g.emit(asm.Mov.Reg(asm.R9, asm.R1))
	if err := g.entryKey(key); err != nil {
		return nil, err
	}
	if err := g.loadArg(asm.R0, tg.SkbArg); err != nil {
		return nil, err
	}
	g.emit(asm.StoreMem(asm.RFP, skb, asm.R0, asm.DWord))
	// The task's frames for this function, created empty the first time.
	g.lookup(EntryMap, key)
	g.emit(asm.JNE.Imm(asm.R0, 0, "have"))
	for off := 0; off < ms.entryValue(); off += 8 {
		g.emit(zero8(val + int16(off))...)
	}
	g.update(EntryMap, key, val)
	g.lookup(EntryMap, key)
	g.emit(asm.JEq.Imm(asm.R0, 0, exitLabel))
	// Push: the frame at count (when it fits), then count+1.
	g.emit(
		asm.Mov.Reg(asm.R6, asm.R0).WithSymbol("have"),
		asm.LoadMem(asm.R7, asm.R6, 0, asm.Word),
		asm.JGE.Imm(asm.R7, entryDepth, "count"),
		asm.FnKtimeGetNs.Call(),
		asm.Mov.Reg(asm.R1, asm.R7),
	)
	g.frameAt(asm.R1)
	g.emit(
		asm.Mov.Reg(asm.R2, asm.R6),
		asm.Add.Reg(asm.R2, asm.R1),
		asm.StoreMem(asm.R2, entryFrameNs, asm.R0, asm.DWord),
		asm.LoadMem(asm.R1, asm.RFP, skb, asm.DWord),
		asm.StoreMem(asm.R2, entryFrameSkb, asm.R1, asm.DWord),
	)
	if g.stashFunc() {
		g.emit(asm.Mov.Reg(asm.R8, asm.R2))
		if err := g.funcIP(); err != nil {
			return nil, err
		}
		g.emit(asm.StoreMem(asm.R8, entryFrameFunc, asm.R0, asm.DWord))
	}
	g.emit(
		asm.Add.Imm(asm.R7, 1).WithSymbol("count"),
		asm.StoreMem(asm.R6, 0, asm.R7, asm.Word),
	)
	g.emit(
		asm.Mov.Imm(asm.R0, 0).WithSymbol(exitLabel),
		asm.Return(),
	)
	ps.Instructions = g.insns
	p := &Program{Name: name, Prog: ps, SkbArg: tg.SkbArg, Helper: HelperEntry,
		Attach: Attach{Kind: AttachSkbFuncs, Text: "skbret:", ProbeKind: string(lang.ProbeSkbRet)}}
	if tg.Fentry {
		p.Function = tg.Name
		p.Attach.Kind, p.Attach.Func = AttachFentry, tg.Name
	}
	return p, nil
}

// entryPrograms adds the entry programs of a script's skbret: probes.
func entryPrograms(s *lang.Script, ms *mapSet, out *Output, opts Options) error {
	has := false
	for _, p := range s.Probes {
		for _, sp := range p.Specs {
			has = has || sp.Kind == lang.ProbeSkbRet
		}
	}
	if !has {
		return nil
	}
	targets := opts.EntryTargets
	if opts.RetTargets == nil {
		for a := 0; a < SkbArgs; a++ {
			targets = append(targets, SkbTarget{SkbArg: a})
		}
	}
	for i, tg := range targets {
		name := fmt.Sprintf("entry_skb%d", tg.SkbArg)
		if tg.Fentry {
			name = fmt.Sprintf("entry_fn%d", i)
		}
		p, err := compileEntry(ms, tg, name, opts.Ksym)
		if err != nil {
			return err
		}
		out.Programs = append(out.Programs, p)
	}
	return nil
}

// defaultRetTargets are the return programs an skbret: spec compiles to
// when the runtime does not say (a dump with -d): the kprobe form, one
// reading the value as a signed 64-bit integer.
var defaultRetTargets = []SkbTarget{{SkbArg: -1, Return: true, Ret: RetClass{Size: 8, Signed: true}}}
