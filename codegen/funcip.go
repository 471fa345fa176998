package codegen

import (
	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/lang"
)

// The address of the traced function, which `func` and the print head
// read and skbret: keys its entries by. bpf_get_func_ip gives it in
// fentry, fexit, kprobe and kprobe-multi programs from Linux 5.15 on;
// before, a program for one function knows it as a constant, a kprobe
// shared by many functions reads the instruction pointer, and a return
// program shared by many takes it from what its entry kept.

// oneFuncAddr is the address of the one function a program of this kind
// traces (an fentry or fexit program, kprobe:FN, a glob's program per
// function), or 0: a program shared by many functions, an address ksym
// does not know, or not a function at all.
func oneFuncAddr(kind lang.ProbeKind, spec *check.SpecInfo, tg SkbTarget, ksym func(string) uint64) uint64 {
	fn := tg.fn
	switch {
	case tg.Fentry:
		fn = tg.Name
	case tg.shared:
	case kind == lang.ProbeFentry, kind == lang.ProbeFexit, kind == lang.ProbeKprobe, kind == lang.ProbeKretprobe:
		fn = spec.Function()
	}
	if fn == "" || ksym == nil {
		return 0
	}
	return ksym(fn)
}

// stashFunc reports whether the program is the entry or return of
// skbret: probes shared by many functions on a kernel without
// bpf_get_func_ip: the entry then keeps the function's address in its
// frame, and entries are keyed by the task alone.
func (g *gen) stashFunc() bool {
	return g.maps.noFuncIP() && g.ctx == ctxRegs && g.funcAddr == 0
}

// funcIP puts the traced function's address in R0. A tp_btf program has no
// trampoline for bpf_get_func_ip; there it is the tracepoint's address. The
// error is a kprobe's on an architecture whose registers are not known.
func (g *gen) funcIP() error {
	switch {
	case g.userSpace():
		// A user-space function has no kernel address (func and probe
		// are names there).
		g.emit(asm.Mov.Imm(asm.R0, 0))
	case g.target.Name != "" && !g.target.Fentry:
		g.emit(asm.LoadImm(asm.R0, int64(g.target.FuncAddr), asm.DWord))
	case g.funcAddr != 0:
		g.emit(asm.LoadImm(asm.R0, int64(g.funcAddr), asm.DWord))
	case g.entryFunc != 0:
		g.emit(asm.LoadMem(asm.R0, asm.RFP, g.entryFunc, asm.DWord))
	case g.maps.noFuncIP() && g.ctx == ctxRegs && !g.target.Return:
		// At a kprobe's entry the instruction pointer is at (or just
		// past) the function's first instruction.
		regs, err := g.maps.kprobeRegs()
		if err != nil {
			return err
		}
		g.emit(asm.LoadMem(asm.R0, asm.R9, regs.ip, asm.DWord))
		if regs.ipAfter != 0 {
			g.emit(asm.Sub.Imm(asm.R0, regs.ipAfter))
		}
	case g.maps.noFuncIP():
		// Nothing says which function this is.
		g.emit(asm.Mov.Imm(asm.R0, 0))
	default:
		g.emit(asm.Mov.Reg(asm.R1, asm.R9), asm.FnGetFuncIp.Call())
	}
	return nil
}
