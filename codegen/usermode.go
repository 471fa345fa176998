package codegen

import (
	goruntime "runtime"

	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/lang"
)

// usermode pushes bpftrace's usermode: 1 where the event interrupted user
// space. begin, end and interval run from skbtrace's own process (as
// bpftrace's do), and uprobes in user space: 1. A profile or kprobe
// event reads its registers' privilege (x86-64's cs & 3, arm64's pstate
// exception level); other probes run in the kernel: 0.
func (g *gen) usermode() error {
	switch g.spec.Spec.Kind {
	case lang.ProbeBegin, lang.ProbeEnd, lang.ProbeInterval, lang.ProbeSelf, lang.ProbeTest, lang.ProbeBench, lang.ProbeUprobe, lang.ProbeUretprobe:
		g.emit(asm.Mov.Imm(asm.R0, 1))
		return g.vs.push(asm.R0)
	case lang.ProbeProfile, lang.ProbeKprobe, lang.ProbeKretprobe:
		if g.ctx != ctxRegs && g.spec.Spec.Kind != lang.ProbeProfile {
			break
		}
		arch := g.maps.arch
		if arch == "" {
			arch = goruntime.GOARCH
		}
		user := g.label("user")
		switch arch {
		case "amd64":
			// struct pt_regs's cs, the 18th of its 21 words.
			g.emit(asm.LoadMem(asm.R0, asm.R9, 17*8, asm.DWord), asm.And.Imm(asm.R0, 3), asm.JEq.Imm(asm.R0, 3, user))
		case "arm64":
			// struct user_pt_regs's pstate, after x0-x30, sp and pc: EL0t is 0.
			g.emit(asm.LoadMem(asm.R0, asm.R9, 33*8, asm.DWord), asm.And.Imm(asm.R0, 0xf), asm.JEq.Imm(asm.R0, 0, user))
		default:
			g.emit(asm.Mov.Imm(asm.R0, 0))
			return g.vs.push(asm.R0)
		}
		done := g.label("mode")
		g.emit(asm.Mov.Imm(asm.R0, 0), asm.Ja.Label(done), asm.Mov.Imm(asm.R0, 1).WithSymbol(user))
		g.mark(done)
		return g.vs.push(asm.R0)
	}
	g.emit(asm.Mov.Imm(asm.R0, 0))
	return g.vs.push(asm.R0)
}
