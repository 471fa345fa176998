package codegen

import (
	"fmt"
	goruntime "runtime"
)

// regsLayout is where a kprobe's struct pt_regs holds a function's
// arguments, its return value, the stack pointer and the instruction
// pointer on one architecture, as the kernel's BTF lays the struct out
// (PT_REGS_PARM1.. of libbpf's bpf_tracing.h).
type regsLayout struct {
	// args are the offsets of the arguments passed in registers.
	args []int16
	// ret, sp and ip are the offsets of the return value, the stack
	// pointer and the instruction pointer.
	ret, sp, ip int16
	// stackArg is where argument len(args) is, relative to the stack
	// pointer at the function's entry: x86-64's call pushed the return
	// address there, arm64 keeps it in a register.
	stackArg int32
	// ipAfter is how far past the function's address a kprobe's
	// instruction pointer is at its entry: x86-64 reports the address
	// after the int3 (or the ftrace call site plus one), arm64 the
	// address of the brk.
	ipAfter int32
}

// regsLayouts are the layouts of the architectures skbtrace is built for.
var regsLayouts = map[string]*regsLayout{
	// struct pt_regs { r15 r14 r13 r12 bp bx r11 r10 r9 r8 ax cx dx si di
	// orig_ax ip cs flags sp ss }: di, si, dx, cx, r8, r9 carry arguments.
	"amd64": {args: []int16{112, 104, 96, 88, 72, 64}, ret: 80, sp: 152, ip: 128, stackArg: 8, ipAfter: 1},
	// struct pt_regs { struct user_pt_regs { regs[31] sp pc pstate } ...}:
	// x0-x7 carry arguments, x0 the return value.
	"arm64": {args: []int16{0, 8, 16, 24, 32, 40, 48, 56}, ret: 0, sp: 248, ip: 256, stackArg: 0, ipAfter: 0},
}

// archRegs returns the pt_regs layout of arch (a GOARCH; "" is this
// binary's), or an error naming the architectures known.
func archRegs(arch string) (*regsLayout, error) {
	if arch == "" {
		arch = goruntime.GOARCH
	}
	if l, ok := regsLayouts[arch]; ok {
		return l, nil
	}
	return nil, fmt.Errorf("kprobes on %s are not supported: skbtrace knows the registers of amd64 and arm64", arch)
}
