package codegen

import (
	"fmt"

	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/stdlib"
)

// uprobe: and uretprobe: programs are kprobe programs on a user-space
// function: struct pt_regs holds the user registers, pointers point into
// the traced process's memory (read with bpf_probe_read_user, as bpftrace
// picks the helper by the probe's address space), and func and probe are
// names known when the program is compiled, one program per function.

// userSpace reports whether the program traces a user-space function.
func (g *gen) userSpace() bool {
	return g.spec != nil && (g.spec.Spec.Kind == lang.ProbeUprobe || g.spec.Spec.Kind == lang.ProbeUretprobe)
}

// readHelper is the helper that reads memory where the program's pointers
// point: a bpf_probe_read_kernel-like helper, or its user-space twin in a
// uprobe.
func (g *gen) readHelper(kernel asm.BuiltinFunc) asm.BuiltinFunc {
	if !g.userSpace() {
		return kernel
	}
	switch kernel {
	case asm.FnProbeReadKernel:
		return asm.FnProbeReadUser
	case asm.FnProbeReadKernelStr:
		return asm.FnProbeReadUserStr
	}
	return kernel
}

// userFuncValue pushes func in a uprobe: its function's name, an index
// into Output.ProbeNames as probe's values are.
func (g *gen) userFuncValue() error {
	return g.nameValue(g.spec.Func)
}

// userFuncCompare reports whether an equality compares func (not probe)
// in a uprobe, and then the name it is compared with is the function's.
func (g *gen) userFuncCompare(e *lang.BinaryExpr) bool {
	if !g.userSpace() {
		return false
	}
	for _, x := range []lang.Expr{e.X, e.Y} {
		if id, ok := lang.Unparen(x).(*lang.Ident); ok && id.Name == "func" && g.info.Fields[id] != nil {
			return true
		}
	}
	return false
}

// compileUserGlob compiles a program for each function a uprobe glob
// matches: func and probe are each program's own.
func compileUserGlob(s *lang.Script, info *check.Info, ms *mapSet, out *Output, p *lang.Probe, spec *check.SpecInfo, name string, ksym func(string) uint64) ([]*Program, error) {
	var progs []*Program
	for i, f := range spec.Funcs {
		prog, err := compileProbe(info, ms, out, p, f, fmt.Sprintf("%s_u%d", name, i), SkbTarget{SkbArg: -1}, ksym)
		if err != nil {
			return nil, positioned(s, spec, err)
		}
		progs = append(progs, prog)
	}
	return progs, nil
}

// usymInto writes usym(address) at the slot at: the address, then the
// current process's id (the kernel's tgid), which the runtime finds the
// address's binary by when it prints the value.
func (g *gen) usymInto(c *lang.CallExpr, at int16, size int) error {
	if size < stdlib.UsymSize {
		return unsupported(c, "usym() in a smaller slot")
	}
	if err := g.expr(c.Args[0]); err != nil {
		return err
	}
	g.vs.pop(asm.R0)
	g.emit(
		asm.StoreMem(asm.RFP, at, asm.R0, asm.DWord),
		asm.FnGetCurrentPidTgid.Call(),
		asm.RSh.Imm(asm.R0, 32),
		asm.StoreMem(asm.RFP, at+8, asm.R0, asm.DWord),
	)
	return nil
}
