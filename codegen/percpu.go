package codegen

import (
	"fmt"

	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/lang"
)

// pseudoBTFID is BPF_PSEUDO_BTF_ID: a 64-bit load whose immediate is a
// kernel variable's BTF id, which the verifier turns into its address.
const pseudoBTFID = asm.Register(3)

// percpuKaddr pushes percpu_kaddr("name"[, cpu]): the per-CPU variable's
// BTF id loaded as a pseudo pointer, then bpf_this_cpu_ptr of it, or
// bpf_per_cpu_ptr with the CPU (NULL past the last CPU).
func (g *gen) percpuKaddr(c *lang.CallExpr) error {
	name := g.info.Consts[c.Args[0]].Str
	id, err := percpuVarID(name)
	if err != nil {
		return &spanError{span: c.Args[0].Span(), hint: "percpu_kaddr reads per-CPU variables of the kernel's BTF (its .data..percpu section): runqueues, process_counts",
			msg: fmt.Sprintf("percpu_kaddr: %v", err)}
	}
	if g.ksym != nil && g.ksym(name) == 0 {
		// The verifier finds the variable's address in kallsyms.
		return &spanError{span: c.Args[0].Span(), hint: "the kernel resolves it from /proc/kallsyms, which lists data only where the kernel is built with CONFIG_KALLSYMS_ALL",
			msg: fmt.Sprintf("percpu_kaddr: this kernel's /proc/kallsyms does not list %q", name)}
	}
	if len(c.Args) == 2 {
		if err := g.expr(c.Args[1]); err != nil {
			return err
		}
		g.vs.pop(asm.R2)
	}
	ld := asm.LoadImm(asm.R1, int64(id), asm.DWord)
	ld.Src = pseudoBTFID
	g.emit(ld)
	if len(c.Args) == 2 {
		g.emit(asm.FnPerCpuPtr.Call())
	} else {
		g.emit(asm.FnThisCpuPtr.Call())
	}
	return g.vs.push(asm.R0)
}

// percpuVarID finds a per-CPU variable's id in the kernel's BTF.
func percpuVarID(name string) (btf.TypeID, error) {
	spec, err := btf.LoadKernelSpec()
	if err != nil {
		return 0, err
	}
	var v *btf.Var
	if err := spec.TypeByName(name, &v); err != nil {
		return 0, fmt.Errorf("no kernel variable %q in BTF", name)
	}
	return spec.TypeID(v)
}
