package codegen

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/lang"
)

// The return side of skb: probes (skbret:GLOB). An entry program on every
// function an skbret: glob matches stashes the skb and the time in
// EntryMap, keyed by the task (the CPU where there is none: idle tasks
// all have pid 0) and the function; the return program takes them out
// again, so the skb fields and duration work where the arguments are gone
// (kretprobes, kprobe-multi returns). A function that calls itself on the
// same task keeps the innermost entry only: the outer return finds none
// and is not reported.

// EntryMap is where entry programs stash the skb and the time at entry.
const EntryMap = "skbret_entry"

// entryMapSize bounds the entries in flight; an LRU map forgets those of
// returns never seen (a function whose return refused to attach).
const entryMapSize = 16384

// HelperEntry marks the entry programs skbret: probes add.
const HelperEntry = "entry"

func (ms *mapSet) entryMap() {
	if _, ok := ms.specs[EntryMap]; !ok {
		ms.specs[EntryMap] = &ebpf.MapSpec{Name: EntryMap, Type: ebpf.LRUHash, KeySize: 16, ValueSize: 16, MaxEntries: entryMapSize}
	}
}

// entryKey writes the 16-byte EntryMap key at key: the thread id, or the
// CPU with bit 32 set where the thread id is 0, then the function address.
func (g *gen) entryKey(key int16) {
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
	g.funcIP()
	g.emit(asm.StoreMem(asm.RFP, key+8, asm.R0, asm.DWord))
}

// returnPrologue starts a return program: it takes the entry's skb and
// time out of EntryMap into kept slots; without an entry the event ends.
func (g *gen) returnPrologue() error {
	g.maps.entryMap()
	key, err := g.frame.keep(16)
	if err != nil {
		return err
	}
	slot, err := g.frame.keep(16)
	if err != nil {
		return err
	}
	g.entrySkb, g.entryTime = slot, slot+8
	g.entryKey(key)
	g.lookup(EntryMap, key)
	g.emit(
		asm.JEq.Imm(asm.R0, 0, exitLabel),
		asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
		asm.StoreMem(asm.RFP, g.entrySkb, asm.R1, asm.DWord),
		asm.LoadMem(asm.R1, asm.R0, 8, asm.DWord),
		asm.StoreMem(asm.RFP, g.entryTime, asm.R1, asm.DWord),
		asm.LoadMapPtr(asm.R1, 0).WithReference(EntryMap),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, int32(key)),
		asm.FnMapDeleteElem.Call(),
	)
	return nil
}

// retval reads the return value into R0, as the function's class says:
// sign- or zero-extended from its width; 0 for void.
func (g *gen) skbRetval() {
	tg := g.target
	if tg.Ret.Size == 0 {
		g.emit(asm.Mov.Imm(asm.R0, 0))
		return
	}
	if g.ctx == ctxRegs {
		g.emit(asm.LoadMem(asm.R0, asm.R9, ptRegsRet, asm.DWord))
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
}

// compileEntry generates an entry program: for the kprobe form, one per
// skb position, attached to every function of the skbret: globs whose skb
// is there; with fentry, one per function.
func compileEntry(ms *mapSet, tg SkbTarget, name string) (*Program, error) {
	ms.entryMap()
	g := &gen{maps: ms, skbArg: tg.SkbArg, target: tg, vars: map[string]int16{}}
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
	val, err := g.frame.keep(16)
	if err != nil {
		return nil, err
	}
	g.emit(asm.Mov.Reg(asm.R9, asm.R1))
	g.entryKey(key)
	if err := g.loadArg(asm.R0, tg.SkbArg); err != nil {
		return nil, err
	}
	g.emit(
		asm.StoreMem(asm.RFP, val, asm.R0, asm.DWord),
		asm.FnKtimeGetNs.Call(),
		asm.StoreMem(asm.RFP, val+8, asm.R0, asm.DWord),
		asm.LoadMapPtr(asm.R1, 0).WithReference(EntryMap),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, int32(key)),
		asm.Mov.Reg(asm.R3, asm.RFP),
		asm.Add.Imm(asm.R3, int32(val)),
		asm.Mov.Imm(asm.R4, 0),
		asm.FnMapUpdateElem.Call(),
		asm.Mov.Imm(asm.R0, 0),
		asm.Return(),
	)
	ps.Instructions = g.insns
	p := &Program{Name: name, Prog: ps, SkbArg: tg.SkbArg, Helper: HelperEntry}
	if tg.Fentry {
		p.Function = tg.Name
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
		p, err := compileEntry(ms, tg, name)
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
