package session

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/link"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/runtime/kernel"
)

// attachBPF loads each bpf: and bpfret: program, with the program it
// traces (opened by its id) as its target, and attaches it: fentry or
// fexit on that program's function. Under missing_probes = warn or ignore
// a program that cannot be traced is said once per spec, not an error
// (whydrop's tc and XDP probes, where fentry on programs is refused). Where
// specs take programs loaded while tracing, they are watched for.
func (s *Session) attachBPF() error {
	lenient := s.out.SkipsRefusedBPF()
	refused := false
	said := map[string]bool{}
	for _, p := range s.out.Programs {
		if p.BPF == nil {
			continue
		}
		l, err := s.attachBPFProg(p)
		if errors.Is(err, errProgGone) {
			continue // unloaded since the script was checked: nothing to trace
		}
		if err != nil && lenient {
			refused = refused || errors.Is(err, os.ErrPermission)
			if !said[p.Attach.Text] {
				said[p.Attach.Text] = true
				s.warn("%s is skipped: %s program %s (id %d): %v", p.Attach.Text, p.BPF.Type, p.BPF.Name, p.BPF.ID, err)
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("attach %s to %s program %s (id %d): %w", p.Attach.Text, p.BPF.Type, p.BPF.Name, p.BPF.ID, err)
		}
		s.links = append(s.links, l)
	}
	if s.out.WaitsForBPF() && !refused {
		// Watched once everything else is attached (Start).
		s.bpfKnown = map[uint32]bool{}
		progs, _ := kernel.PacketProgs()
		for _, p := range progs {
			s.bpfKnown[p.ID] = true
		}
	}
	return nil
}

// errProgGone: the program to trace was unloaded after it was listed.
var errProgGone = errors.New("the program was unloaded after the script was checked")

func (s *Session) attachBPFProg(p *codegen.Program) (link.Link, error) {
	target, err := ebpf.NewProgramFromID(ebpf.ProgramID(p.BPF.ID))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, errProgGone
		}
		return nil, err
	}
	defer target.Close()
	cp := *p
	cp.Prog = p.Prog.Copy()
	cp.Prog.AttachTarget = target
	prog, err := LoadShared(s.coll, &cp)
	if err != nil {
		return nil, explainBPFTrace(err, s.verbose)
	}
	defer prog.Close()
	l, err := link.AttachTracing(link.TracingOptions{Program: prog, AttachType: p.Prog.AttachType})
	if err != nil {
		return nil, explainBPFTrace(err, s.verbose)
	}
	return l, nil
}

// explainBPFTrace says what is missing where the kernel refuses fentry or
// fexit on a BPF program, and what to do.
func explainBPFTrace(err error, verbose bool) error {
	var ve *ebpf.VerifierError
	switch {
	case errors.Is(err, os.ErrPermission):
		why := "the kernel refused fentry on a BPF program (EPERM)"
		if lock := kernel.Lockdown(); lock != "" && lock != "none" {
			why += ": kernel lockdown is " + lock
		} else {
			why += ": fentry/fexit is not allowed here (an LSM, lockdown, or a kernel whose BPF trampolines are off, or not root)"
		}
		return &refusedError{msg: why + "; bpf: probes need fentry (Linux 5.5+ with BTF, x86-64 or arm64 6.0+); " +
			"trace the packet around the program instead: skb:tcf_classify, skbret:tcf_classify, or tracepoint:xdp:*", err: err}
	case errors.Is(err, ebpf.ErrNotSupported):
		return fmt.Errorf("this kernel cannot attach fentry to BPF programs (Linux 5.5 and later with BPF trampolines): %w", err)
	case errors.As(err, &ve) && !verbose:
		return fmt.Errorf("the verifier refused the tracing program (run with -v for its log): %v", ve.Cause)
	}
	return err
}

// refusedError says what to do where the kernel refused fentry on a BPF
// program; it is still the kernel's EPERM (errors.Is).
type refusedError struct {
	msg string
	err error
}

func (e *refusedError) Error() string { return e.msg }
func (e *refusedError) Unwrap() error { return e.err }

// ProbeBPFTrace reports whether fentry on BPF programs works here: it
// loads an XDP program of its own (with BTF, attached to nothing), then a
// program that does nothing with fentry on it, attaches that, and closes
// both. The error is explainBPFTrace's. The answer is kept.
func ProbeBPFTrace() error {
	bpfTraceOnce.Do(func() { bpfTraceErr = probeBPFTrace() })
	return bpfTraceErr
}

var (
	bpfTraceOnce sync.Once
	bpfTraceErr  error
)

func probeBPFTrace() error {
	const name = "skbt_fentry"
	ret := asm.Return()
	insns := asm.Instructions{asm.Mov.Imm(asm.R0, 2), ret}
	ctx := &btf.Struct{Name: "xdp_md"}
	proto := &btf.FuncProto{Return: &btf.Int{Name: "int", Size: 4, Encoding: btf.Signed},
		Params: []btf.FuncParam{{Name: "ctx", Type: &btf.Pointer{Target: ctx}}}}
	insns[0] = btf.WithFuncMetadata(insns[0], &btf.Func{Name: name, Type: proto, Linkage: btf.GlobalFunc})
	target, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: name, Type: ebpf.XDP, License: "GPL", Instructions: insns})
	if err != nil {
		return fmt.Errorf("load an XDP program to try fentry on: %w", err)
	}
	defer target.Close()
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: "skbt_try", Type: ebpf.Tracing, AttachType: ebpf.AttachTraceFEntry,
		AttachTo: name, AttachTarget: target, License: "GPL", Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()}})
	if err != nil {
		return explainBPFTrace(err, false)
	}
	defer prog.Close()
	l, err := link.AttachTracing(link.TracingOptions{Program: prog, AttachType: ebpf.AttachTraceFEntry})
	if err != nil {
		return explainBPFTrace(err, false)
	}
	return l.Close()
}
