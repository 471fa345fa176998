package kernel

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
)

// KfuncProgTypes are the program types KfuncAllowed asks about, by the
// names the checker gives them.
var KfuncProgTypes = map[string]*ebpf.ProgramSpec{
	"kprobe":         {Type: ebpf.Kprobe},
	"raw_tracepoint": {Type: ebpf.RawTracepoint},
	"tracepoint":     {Type: ebpf.TracePoint},
	"perf_event":     {Type: ebpf.PerfEvent},
	"xdp":            {Type: ebpf.XDP},
	// fentry, fexit and tp_btf programs are BPF_PROG_TYPE_TRACING: the
	// kernel lets each the same kfuncs, so a tp_btf program stands for
	// them (it loads where fentry is refused).
	"tracing": {Type: ebpf.Tracing, AttachType: ebpf.AttachTraceRawTp, AttachTo: "sys_enter"},
}

var kfuncAllowed struct {
	sync.Mutex
	known map[[2]string]bool
}

// KfuncAllowed is bpftrace's kfunc_allowed: whether a program of progType
// (a key of KfuncProgTypes) may call the kernel function kfunc. It loads a
// program of that type that calls it once, and asks the verifier: a
// kfunc it does not know, or does not let that type call, is not allowed;
// one whose call it checks further (its arguments) is. Answers are kept.
func KfuncAllowed(progType, kfunc string) bool {
	kfuncAllowed.Lock()
	defer kfuncAllowed.Unlock()
	key := [2]string{progType, kfunc}
	if v, ok := kfuncAllowed.known[key]; ok {
		return v
	}
	v := probeKfunc(progType, kfunc) == nil
	if kfuncAllowed.known == nil {
		kfuncAllowed.known = map[[2]string]bool{}
	}
	kfuncAllowed.known[key] = v
	return v
}

// probeKfunc loads the probe program; nil where the kernel lets the type
// call the kfunc.
func probeKfunc(progType, kfunc string) error {
	base, ok := KfuncProgTypes[progType]
	if !ok {
		return fmt.Errorf("no program type %q", progType)
	}
	spec, err := BTF()
	if err != nil {
		return err
	}
	var fn *btf.Func
	if err := spec.TypeByName(kfunc, &fn); err != nil {
		return err
	}
	id, err := spec.TypeID(fn)
	if err != nil {
		return err
	}
	ps := base.Copy()
	ps.Name, ps.License = "kfunc_probe", "GPL"
	ps.Instructions = asm.Instructions{
		asm.Mov.Imm(asm.R1, 0), asm.Mov.Imm(asm.R2, 0), asm.Mov.Imm(asm.R3, 0),
		asm.Mov.Imm(asm.R4, 0), asm.Mov.Imm(asm.R5, 0),
		{OpCode: asm.OpCode(asm.JumpClass).SetJumpOp(asm.Call), Src: asm.PseudoKfuncCall, Constant: int64(id)},
		asm.Mov.Imm(asm.R0, 0), asm.Return(),
	}
	prog, err := ebpf.NewProgramWithOptions(ps, ebpf.ProgramOptions{LogLevel: ebpf.LogLevelBranch})
	if err == nil {
		prog.Close()
		return nil
	}
	var ve *ebpf.VerifierError
	if !errors.As(err, &ve) {
		return err
	}
	log := strings.Join(ve.Log, "\n")
	for _, refused := range []string{"is not allowed", "not supported", "invalid kernel function", "cannot call", "kernel btf_id"} {
		if strings.Contains(log, refused) {
			return err
		}
	}
	// Refused for what the probe passed or kept (NULL arguments, a
	// reference not released): the type may call it.
	return nil
}
