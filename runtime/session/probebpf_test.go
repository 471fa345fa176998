package session

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/internal/bpfprogtest"
)

// TestProbeBPFTrace checks that ProbeBPFTrace answers as fentry on a real
// tc program does: nil where that loads (the VM's kernels), and where the
// kernel refuses it (this host: EPERM), the error that says what is
// missing and what to trace instead.
func TestProbeBPFTrace(t *testing.T) {
	target, err := ebpf.NewProgram(bpfprogtest.TCDropPort("pb_tc", 9))
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	prog, loadErr := ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.Tracing, AttachType: ebpf.AttachTraceFExit, AttachTo: "pb_tc", AttachTarget: target,
		License: "GPL", Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()}})
	if loadErr == nil {
		prog.Close()
	}
	err = ProbeBPFTrace()
	switch {
	case loadErr == nil && err != nil:
		t.Errorf("fentry on a tc program loads, yet ProbeBPFTrace says %v", err)
	case errors.Is(loadErr, os.ErrPermission) && (err == nil || !strings.Contains(err.Error(), "refused fentry on a BPF program (EPERM)") ||
		!strings.Contains(err.Error(), "skb:tcf_classify")):
		t.Errorf("fentry on a tc program is refused (%v), and ProbeBPFTrace says %v", loadErr, err)
	case loadErr != nil && err == nil:
		t.Errorf("fentry on a tc program fails (%v), yet ProbeBPFTrace says it works", loadErr)
	}
	t.Logf("fentry on BPF programs: %v", err)
}
