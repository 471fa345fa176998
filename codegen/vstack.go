package codegen

import "github.com/cilium/ebpf/asm"

// vstack is the register allocator. Expressions are evaluated as on a stack
// machine: each intermediate value is an entry. The first entries live in the
// callee-saved registers R6-R8, which survive helper calls; deeper entries
// spill to stack slots. R0-R5 are scratch within a single primitive, since
// every helper call clobbers them. So an expression of any depth compiles.
type vstack struct {
	g     *gen
	depth int
	slots []int16 // spill slot of entry i (for i >= len(regs))
	// moved is 1 + the index of the instruction a push last emitted to move
	// its value into a register (0: none), and from the register movedFrom:
	// a pop of that entry with nothing in between that changes movedFrom
	// takes the value from there instead.
	moved      int
	movedFrom  asm.Register
	movedDepth int // the entry moved
	// regs are the registers the first entries live in: vregs, or
	// scratchVregs in scratch mode, where R8 holds the scratch area.
	regs []asm.Register
}

var (
	vregs        = []asm.Register{asm.R6, asm.R7, asm.R8}
	scratchVregs = []asm.Register{asm.R6, asm.R7}
)

// push moves a scratch register's value onto the stack.
func (v *vstack) push(src asm.Register) error {
	vregs := v.vregs()
	i := v.depth
	v.depth++
	v.moved = 0
	if i < len(vregs) {
		if src != vregs[i] {
			v.g.emit(asm.Mov.Reg(vregs[i], src))
			v.moved, v.movedFrom, v.movedDepth = len(v.g.insns), src, i
		}
		return nil
	}
	slot, err := v.slot(i - len(vregs))
	if err != nil {
		return err
	}
	v.g.emit(asm.StoreMem(asm.RFP, slot, src, asm.DWord))
	return nil
}

// vregs are the registers the first entries live in.
func (v *vstack) vregs() []asm.Register {
	if v.regs != nil {
		return v.regs
	}
	return vregs
}

func (v *vstack) slot(k int) (int16, error) {
	for len(v.slots) <= k {
		off, err := v.g.frame.keep(8)
		if err != nil {
			return 0, err
		}
		v.slots = append(v.slots, off)
	}
	return v.slots[k], nil
}

// pop moves the top entry into a scratch register.
func (v *vstack) pop(dst asm.Register) {
	vregs := v.vregs()
	v.depth--
	i := v.depth
	if i < len(vregs) {
		if v.moved > 0 && v.movedDepth == i && keeps(v.g.insns[v.moved-1:], v.movedFrom, vregs[i]) {
			// Nothing since the push has changed the register the value
			// came from, nor come in from elsewhere (a label): the move
			// into vregs[i] goes, and the value is taken from there.
			v.g.insns = append(v.g.insns[:v.moved-1], v.g.insns[v.moved:]...)
			v.moved = 0
			if dst != v.movedFrom {
				v.g.emit(asm.Mov.Reg(dst, v.movedFrom))
			}
			return
		}
		if dst != vregs[i] {
			v.g.emit(asm.Mov.Reg(dst, vregs[i]))
		}
		return
	}
	v.g.emit(asm.LoadMem(dst, asm.RFP, v.slots[i-len(vregs)], asm.DWord))
}

// keeps reports whether the straight line insns (a push's move, then what
// followed it) leaves from as it was and never touches vreg: no label, no
// call, no write of from, no use of vreg after the move.
func keeps(insns asm.Instructions, from, vreg asm.Register) bool {
	if len(insns) == 0 || insns[0].Symbol() != "" {
		return false
	}
	for _, ins := range insns[1:] {
		cls := ins.OpCode.Class()
		switch {
		case ins.Symbol() != "", cls.IsJump() && ins.OpCode.JumpOp() == asm.Call:
			return false
		case cls == asm.StXClass && ins.OpCode.Mode() == asm.AtomicMode:
			return false // a fetch writes its source register
		case ins.Dst == vreg || ins.Src == vreg:
			return false
		case (cls.IsALU() || cls == asm.LdXClass || cls == asm.LdClass) && ins.Dst == from:
			return false
		}
	}
	return true
}
