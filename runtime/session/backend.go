package session

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/runtime/kernel"
)

// Backend is how skb: probes attach to kernel functions: codegen's, which
// compiles the programs for it (codegen.Options.Backend).
type Backend = codegen.Backend

// The backends, fastest first; BackendTracepoint is the fallback where no
// function backend works.
const (
	BackendKprobeMulti = codegen.BackendKprobeMulti
	BackendFentry      = codegen.BackendFentry
	BackendKprobe      = codegen.BackendKprobe
	BackendTracepoint  = codegen.BackendTracepoint
)

// FunctionBackends are the backends that attach to functions, in the order
// auto tries them: kprobe-multi, where the kernel has it, attaches every
// function with one link, in about a second, and is taken alone. Without
// it, auto weighs fentry and kprobe for the script (PickByCost).
var FunctionBackends = []Backend{BackendKprobeMulti, BackendFentry, BackendKprobe}

// AutoWhy says why auto chose b: the backends tried before it and why
// each does not work here, and what the costs weighed said (weighed: "",
// where only one function backend works).
func AutoWhy(b Backend, reasons []string, weighed string) string {
	why := "the fastest backend"
	if len(reasons) > 0 {
		why = "the first that works here; " + strings.Join(reasons, "; ")
	}
	if weighed != "" {
		why = "of those that work here, the quickest for this script: " + weighed
		if len(reasons) > 0 {
			why += "; " + strings.Join(reasons, "; ")
		}
	}
	return why
}

// ProbeBackend checks, with a program that does nothing, whether backend b
// can attach to the function fn on this kernel. The error names the missing
// kernel feature.
func ProbeBackend(b Backend, fn string) error {
	spec := &ebpf.ProgramSpec{Name: "probe_backend", License: "GPL", Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()}}
	switch b {
	case BackendKprobeMulti:
		if NoKprobeMulti {
			return errKprobeMultiOff
		}
		spec.Type, spec.AttachType = ebpf.Kprobe, ebpf.AttachTraceKprobeMulti
	case BackendFentry:
		spec.Type, spec.AttachType, spec.AttachTo = ebpf.Tracing, ebpf.AttachTraceFEntry, fn
	case BackendKprobe:
		spec.Type = ebpf.Kprobe
	default:
		return fmt.Errorf("%s is not a function backend", b)
	}
	coll, err := ebpf.NewCollectionWithOptions(&ebpf.CollectionSpec{Programs: map[string]*ebpf.ProgramSpec{"p": spec}}, ebpf.CollectionOptions{Cache: kernel.SpecCache()})
	if err != nil {
		return backendError(b, err)
	}
	defer coll.Close()
	prog := coll.Programs["p"]
	l, err := attachOne(b, prog, []string{fn})
	if err != nil {
		return backendError(b, err)
	}
	l.Close()
	return nil
}

// attachOne attaches a kprobe-form program to functions with kprobe-multi
// (all at once) or kprobe (one function), or an fentry program to its own.
func attachOne(b Backend, prog *ebpf.Program, fns []string) (link.Link, error) {
	switch b {
	case BackendKprobeMulti:
		return link.KprobeMulti(prog, link.KprobeMultiOptions{Symbols: fns})
	case BackendKprobe:
		return link.Kprobe(fns[0], prog, nil)
	}
	return link.AttachTracing(link.TracingOptions{Program: prog, AttachType: ebpf.AttachTraceFEntry})
}

// backendError says which kernel feature a backend lacks, and what to do.
func backendError(b Backend, err error) error {
	switch {
	case b == BackendKprobe && !kernel.HaveKprobes():
		return fmt.Errorf("this kernel has no kprobes (CONFIG_KPROBES is off: no kprobe PMU in /sys/bus/event_source/devices)")
	case b == BackendKprobeMulti && errors.Is(err, ebpf.ErrNotSupported):
		return fmt.Errorf("this kernel has no kprobe-multi links (they need Linux 5.18 or later with CONFIG_FPROBE)")
	case b == BackendKprobeMulti && !kernel.HaveKprobes() && (errors.Is(err, os.ErrNotExist) || errors.Is(err, os.ErrInvalid)):
		return fmt.Errorf("this kernel has no kprobe-multi links (no fprobe: CONFIG_FPROBE or CONFIG_KPROBES is off): %v", err)
	case b == BackendFentry && errors.Is(err, os.ErrPermission) && os.Geteuid() == 0:
		return fmt.Errorf("this kernel refuses fentry programs even to root (kernel lockdown or a BPF LSM policy)")
	case b == BackendFentry && errors.Is(err, ebpf.ErrNotSupported):
		return fmt.Errorf("this kernel has no fentry (it needs Linux 5.5 or later with BTF and CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)")
	case errors.Is(err, os.ErrPermission):
		return fmt.Errorf("the kernel refused %s: run skbtrace as root", b)
	}
	return fmt.Errorf("%s does not work on this kernel: %w", b, err)
}

// CheckBackendName checks --backend's value before anything else is done.
func CheckBackendName(name string) error {
	switch Backend(name) {
	case "auto", BackendKprobeMulti, BackendFentry, BackendKprobe, BackendTracepoint:
		return nil
	}
	return fmt.Errorf("--backend takes auto, kprobe-multi, fentry, kprobe or tracepoint, not %q", name)
}

// ChooseBackend picks the backend for skb: probes: forced, the one named;
// auto, the first function backend that works, or the tracepoint fallback.
// probe is ProbeBackend, or a stand-in in tests; reasons say why each
// backend tried before the chosen one does not work. (A script's own
// choice weighs the backends that work by their cost: WorkingBackends
// and PickByCost.)
func ChooseBackend(forced string, probe func(Backend) error) (chosen Backend, reasons []string, err error) {
	works, reasons, err := WorkingBackends(forced, probe)
	if err != nil || len(works) == 0 {
		return BackendTracepoint, reasons, err
	}
	return works[0], reasons, nil
}

// WorkingBackends lists the function backends that skb: probes may attach
// with: forced, the one named (an error where it does not work here; none
// for tracepoint); auto, kprobe-multi alone where it works (one link for
// every function), else each that works, in FunctionBackends' order.
// reasons say why the others do not work; none works: the tracepoint
// fallback.
func WorkingBackends(forced string, probe func(Backend) error) (works []Backend, reasons []string, err error) {
	switch forced {
	case "auto", "":
	case string(BackendTracepoint):
		return nil, nil, nil
	case string(BackendKprobeMulti), string(BackendFentry), string(BackendKprobe):
		if err := probe(Backend(forced)); err != nil {
			return nil, nil, fmt.Errorf("--backend %s: %w", forced, err)
		}
		return []Backend{Backend(forced)}, nil, nil
	default:
		return nil, nil, CheckBackendName(forced)
	}
	for _, b := range FunctionBackends {
		err := probe(b)
		if err != nil {
			reasons = append(reasons, fmt.Sprintf("%s: %v", b, err))
			continue
		}
		works = append(works, b)
		if b == BackendKprobeMulti {
			break
		}
	}
	return works, reasons, nil
}
