package stdlib

import (
	"fmt"
	goruntime "runtime"

	"github.com/skbtrace/skbtrace/lang/types"
)

// reg is bpftrace's reg("name"): a register of the struct pt_regs a
// kprobe, kretprobe, uprobe or uretprobe stops with, by the name bpftrace
// gives it on this architecture (the checker says where it is valid:
// check/reg.go; codegen reads it from the context).
var reg = &Func{Name: "reg", Sig: `reg("name")`, Doc: "the register of that name (amd64: ip, sp, ax, di...; arm64: r0-r30, sp, pc, pstate) where a kprobe, kretprobe, uprobe or uretprobe stopped", Infer: func(c Call) types.Type {
	if arity(c, `reg("name")`, 1, 1) {
		if _, ok := c.ConstStr(0); !ok && c.Arg(0).Kind != types.Invalid {
			c.Errorf(0, `e.g. reg("ip")`, "reg needs the register's name as a string")
		}
	}
	return types.U64
}}

// regNames are, per GOARCH, bpftrace's names of the registers in the
// order of the kernel's struct pt_regs, 8 bytes each: x86-64's { r15 r14
// r13 r12 bp bx r11 r10 r9 r8 ax cx dx si di orig_ax ip cs flags sp ss },
// arm64's struct user_pt_regs { regs[31] sp pc pstate } (r0-r30 are
// x0-x30).
var regNames = map[string][]string{
	"amd64": {"r15", "r14", "r13", "r12", "bp", "bx", "r11", "r10", "r9", "r8", "ax", "cx", "dx", "si", "di", "orig_ax", "ip", "cs", "flags", "sp", "ss"},
	"arm64": append(arm64X(), "sp", "pc", "pstate"),
}

func arm64X() []string {
	var r []string
	for i := 0; i <= 30; i++ {
		r = append(r, fmt.Sprintf("r%d", i))
	}
	return r
}

// RegNames are arch's register names (a GOARCH; "" is this binary's).
func RegNames(arch string) []string {
	if arch == "" {
		arch = goruntime.GOARCH
	}
	return regNames[arch]
}

// RegOffset is register name's offset in struct pt_regs on arch (a
// GOARCH; "" is this binary's), and whether it is one.
func RegOffset(arch, name string) (int16, bool) {
	for i, n := range RegNames(arch) {
		if n == name {
			return int16(8 * i), true
		}
	}
	return 0, false
}

// ArchName is the architecture's name as bpftrace says it (x86_64,
// aarch64).
func ArchName(arch string) string {
	if arch == "" {
		arch = goruntime.GOARCH
	}
	switch arch {
	case "amd64":
		return "x86_64"
	case "arm64":
		return "aarch64"
	}
	return arch
}
