package codegen

import "github.com/cilium/ebpf/asm"

// MaxRateLimit is the largest --max-rate: the cap is an instruction's
// 32-bit immediate.
const MaxRateLimit = 1<<31 - 1

// rateGate lets at most the cap's events a second through on each CPU
// (--max-rate): OverheadMap's window starts again a second after it
// began, and an event past the cap in it is counted (CappedEvents) and
// returns. Per CPU, so no two programs share a window: no atomics.
func (g *gen) rateGate() error {
	g.maps.overheadMap()
	g.out.MaxRate = g.maps.maxRate
	m := g.frame.mark()
	defer g.frame.release(m)
	slot, err := g.frame.alloc(8)
	if err != nil {
		return err
	}
	inWindow, capped, pass := g.label("rate_window"), g.label("rate_capped"), g.label("rate_pass")
	g.emit(asm.StoreImm(asm.RFP, slot, 0, asm.Word))
	g.lookup(OverheadMap, slot)
	g.emit(
		asm.JEq.Imm(asm.R0, 0, pass),
		asm.StoreMem(asm.RFP, slot, asm.R0, asm.DWord),
		asm.FnKtimeGetNs.Call(),
		asm.LoadMem(asm.R1, asm.RFP, slot, asm.DWord),
		asm.LoadMem(asm.R2, asm.R1, ovRateStart, asm.DWord),
		asm.Mov.Reg(asm.R3, asm.R0),
		asm.Sub.Reg(asm.R3, asm.R2),
		asm.JLT.Imm(asm.R3, 1_000_000_000, inWindow),
		asm.StoreMem(asm.R1, ovRateStart, asm.R0, asm.DWord),
		asm.Mov.Imm(asm.R2, 0),
		asm.StoreMem(asm.R1, ovRateCount, asm.R2, asm.DWord),
		asm.LoadMem(asm.R2, asm.R1, ovRateCount, asm.DWord).WithSymbol(inWindow),
		asm.JGE.Imm(asm.R2, int32(g.maps.maxRate), capped),
		asm.Add.Imm(asm.R2, 1),
		asm.StoreMem(asm.R1, ovRateCount, asm.R2, asm.DWord),
		asm.Ja.Label(pass),
		asm.LoadMem(asm.R2, asm.R1, ovCappedEvents, asm.DWord).WithSymbol(capped),
		asm.Add.Imm(asm.R2, 1),
		asm.StoreMem(asm.R1, ovCappedEvents, asm.R2, asm.DWord),
		asm.Ja.Label(exitLabel),
	)
	g.mark(pass)
	return nil
}
