package codegen

import (
	"fmt"

	"github.com/cilium/ebpf/asm"
)

// On kprobe-multi, and on kprobes where the kernel gives them attach
// cookies (5.15 on), an skb: probe compiles to one program for every place
// of the skb and the drop reason among its functions' arguments
// (SkbTarget's Cookie): the runtime attaches it with a cookie per function
// (AttachCookie) that says where they are, and the program reads them by
// bpf_get_attach_cookie. The verifier lets a program read its context at
// constant offsets only, so the skb is read by a switch over the places
// arguments are passed in registers, or from the stack past them, once, at
// the program's start; the body is then one, walked by the verifier once.
// Before, a --filter over every function was a dozen programs, one per
// place, each verified and linked (an fprobe, an ftrace update) on its own.

// The attach cookie's fields: the skb's argument position in its low byte,
// and the reason's, plus one, in the next (0: the function has none).
const (
	cookieSkbShift    = 0
	cookieReasonShift = 8
	cookieFieldMask   = 0xff
)

// AttachCookie is the attach cookie of a function whose skb is
// argument skbArg and whose drop reason is argument reasonArg (-1: none),
// for a program compiled for a Cookie target.
func AttachCookie(skbArg, reasonArg int) uint64 {
	return uint64(skbArg&cookieFieldMask)<<cookieSkbShift | uint64((reasonArg+1)&cookieFieldMask)<<cookieReasonShift
}

// MaxCookieArg is the last argument position a cookie can say.
const MaxCookieArg = cookieFieldMask - 1

// cookiePrologue reads the attach cookie into a kept slot, and the skb it
// places into another, which skbPtr then reads.
func (g *gen) cookiePrologue() error {
	if g.ctx != ctxRegs {
		return fmt.Errorf("an attach cookie's arguments are read in a kprobe only")
	}
	cookie, err := g.frame.keep(8)
	if err != nil {
		return err
	}
	skb, err := g.frame.keep(8)
	if err != nil {
		return err
	}
	g.emit(
		asm.Mov.Reg(asm.R1, asm.R9),
		asm.FnGetAttachCookie.Call(),
		asm.StoreMem(asm.RFP, cookie, asm.R0, asm.DWord),
	)
	g.cookie = cookie
	if err := g.cookieArg(cookieSkbShift, false); err != nil {
		return err
	}
	g.emit(asm.StoreMem(asm.RFP, skb, asm.R0, asm.DWord))
	g.cookieSkb = skb
	return nil
}

// cookieArg loads into R0 the argument whose position the cookie's field
// at shift says; with plusOne the field holds the position plus one, and
// 0 (no such argument) loads 0. R1-R5 are clobbered.
func (g *gen) cookieArg(shift int32, plusOne bool) error {
	const dst = asm.R0
	regs, err := g.maps.kprobeRegs()
	if err != nil {
		return err
	}
	done, stack := g.label("cookie_done"), g.label("cookie_stack")
	g.emit(asm.LoadMem(asm.R2, asm.RFP, g.cookie, asm.DWord))
	if shift > 0 {
		g.emit(asm.RSh.Imm(asm.R2, shift))
	}
	g.emit(asm.And.Imm(asm.R2, cookieFieldMask))
	if plusOne {
		g.emit(asm.Mov.Imm(dst, 0), asm.JEq.Imm(asm.R2, 0, done), asm.Sub.Imm(asm.R2, 1))
	}
	// A jump per register, each to a load at a constant offset.
	labels := make([]string, len(regs.args))
	for i := range regs.args {
		labels[i] = g.label("cookie_reg")
		g.emit(asm.JEq.Imm(asm.R2, int32(i), labels[i]))
	}
	g.emit(asm.Ja.Label(stack))
	for i, off := range regs.args {
		g.emit(asm.LoadMem(dst, asm.R9, off, asm.DWord).WithSymbol(labels[i]), asm.Ja.Label(done))
	}
	// Past the registers: on the stack, at a place computed at run time,
	// read with bpf_probe_read_kernel.
	slot, err := g.readScratch()
	if err != nil {
		return err
	}
	g.emit(
		asm.Sub.Imm(asm.R2, int32(len(regs.args))).WithSymbol(stack),
		asm.LSh.Imm(asm.R2, 3),
		asm.LoadMem(asm.R3, asm.R9, regs.sp, asm.DWord),
		asm.Add.Imm(asm.R3, regs.stackArg),
		asm.Add.Reg(asm.R3, asm.R2),
	)
	g.probeRead(slot, 8)
	g.emit(asm.LoadMem(dst, asm.RFP, slot, asm.DWord))
	g.mark(done)
	return nil
}

// cookieReason loads into R0 the drop reason the cookie places, or 0
// (SKB_NOT_DROPPED_YET) where the function has none.
func (g *gen) cookieReason() error {
	return g.cookieArg(cookieReasonShift, true)
}
