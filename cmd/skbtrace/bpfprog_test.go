package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/internal/bpfprogtest"
)

// loadTestProg loads a program of bpfprogtest for the test's length and
// returns its id. Its name is made unique to the test process, so that
// concurrent runs do not see each other's.
func loadTestProg(t *testing.T, spec *ebpf.ProgramSpec) (*ebpf.Program, uint32) {
	t.Helper()
	p, err := ebpf.NewProgram(spec)
	if err != nil {
		t.Fatalf("load %s: %v", spec.Name, err)
	}
	t.Cleanup(func() { p.Close() })
	info, err := p.Info()
	if err != nil {
		t.Fatal(err)
	}
	id, _ := info.ID()
	return p, uint32(id)
}

// testProgName is a program name of at most 15 characters, unique to this
// process.
func testProgName(prefix string) string {
	return fmt.Sprintf("%s%d", prefix, os.Getpid()%100000)
}

// TestListBPFProgs checks that -l 'bpf:*' lists the test's tc and XDP
// programs with their ids, and one loaded without BTF as untraceable, and
// that a type in the pattern keeps the others out.
func TestListBPFProgs(t *testing.T) {
	tcName, xdpName, bareName := testProgName("sktc"), testProgName("skxd"), testProgName("skbare")
	_, tcID := loadTestProg(t, bpfprogtest.TCDropPort(tcName, 9))
	_, xdpID := loadTestProg(t, bpfprogtest.XDPDropPort(xdpName, 9))
	bare := bpfprogtest.TCDropPort(bareName, 9)
	bare.Instructions = append(asm.Instructions{asm.Mov.Imm(asm.R0, 0)}, bare.Instructions[1:]...) // no func info
	_, bareID := loadTestProg(t, bare)

	code, out, errs := runCLI(t, "-l", "bpf:*")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		fmt.Sprintf("bpf:tc:%s  [id %d]\n", tcName, tcID),
		fmt.Sprintf("bpf:xdp:%s  [id %d]\n", xdpName, xdpID),
		fmt.Sprintf("bpf:tc:%s  [id %d, no BTF: cannot be traced]\n", bareName, bareID),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}
	code, out, errs = runCLI(t, "-l", "bpfret:xdp:"+xdpName)
	if want := fmt.Sprintf("bpfret:xdp:%s  [id %d]\n", xdpName, xdpID); code != 0 || out != want {
		t.Errorf("-l bpfret:xdp:%s: exit %d, %q (%s), want %q", xdpName, code, out, errs, want)
	}
	code, _, errs = runCLI(t, "-l", "bpf:cgroup_skb:"+tcName)
	if code != 1 || !strings.Contains(errs, "no loaded tc, xdp or cgroup_skb program matches") {
		t.Errorf("a type that is not the program's: exit %d, %q", code, errs)
	}
	code, _, errs = runCLI(t, "-e", "bpf:tc:"+bareName+" { print(len) }")
	if want := fmt.Sprintf("bpf:tc:%s matches %s (id %d), loaded without BTF", bareName, bareName, bareID); code != 1 || !strings.Contains(errs, want) {
		t.Errorf("a program without BTF: exit %d, %q, want %q", code, errs, want)
	}
}

// fentryOnProgRefused loads an fentry program on p and reports whether
// the kernel refuses it with EPERM, as this host's does.
func fentryOnProgRefused(t *testing.T, p *ebpf.Program, fn string) bool {
	f, err := ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.Tracing, AttachType: ebpf.AttachTraceFEntry, AttachTo: fn, AttachTarget: p, License: "GPL",
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()}})
	if err == nil {
		f.Close()
		return false
	}
	if !errors.Is(err, os.ErrPermission) {
		t.Skipf("fentry on a BPF program fails here for another reason: %v", err)
	}
	return true
}

// TestBpfProbeRefused checks the error where the kernel refuses fentry on
// BPF programs (this host's: EPERM): it names the probe, the program and
// its id, what is missing and what to trace instead, exit 1. Where fentry
// works, the VM suite's bpf-tc-verdict case traces the verdicts.
func TestBpfProbeRefused(t *testing.T) {
	name := testProgName("skref")
	p, id := loadTestProg(t, bpfprogtest.TCDropPort(name, 9))
	if !fentryOnProgRefused(t, p, name) {
		t.Skip("this kernel allows fentry on BPF programs: test/vm/cases/bpf-tc-verdict.case traces them")
	}
	code, out, errs := runCLI(t, "--duration", "2s", "-e", "bpfret:tc:"+name+" { print(retval, prog, len) }")
	if code != 1 || out != "" {
		t.Fatalf("exit %d, stdout %q, want 1 and nothing", code, out)
	}
	want := fmt.Sprintf("skbtrace: attach bpfret:tc:%s to tc program %s (id %d): the kernel refused fentry on a BPF program (EPERM)", name, name, id)
	if !strings.HasPrefix(errs, want) || !strings.Contains(errs, "skbret:tcf_classify") {
		t.Errorf("stderr %q, want it to start %q and say what to trace instead", errs, want)
	}
}
