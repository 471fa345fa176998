package session

import (
	"bytes"
	"io"
	"strconv"
	"testing"

	"github.com/cilium/ebpf/btf"
	"golang.org/x/sys/unix"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/internal/testkit/compiletest"
	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/runtime/kernel"
)

// TestDetachSwitchesOff: once Detach returns, the programs are still
// attached (their links open) but count nothing more; the maps print what
// was counted before.
func TestDetachSwitchesOff(t *testing.T) {
	spec, err := btf.LoadKernelSpec()
	if err != nil {
		t.Skipf("no kernel BTF: %v", err)
	}
	if !kernel.TracepointExists("syscalls", "sys_enter_getppid") {
		t.Skip("no syscalls:sys_enter_getppid tracepoint (CONFIG_FTRACE_SYSCALLS off)")
	}
	text := `tracepoint:syscalls:sys_enter_getppid /pid == ` + strconv.Itoa(unix.Getpid()) + `/ { @ = count() }`
	script, err := lang.Parse(&lang.Source{Name: "t.st", Text: text})
	if err != nil {
		t.Fatal(err)
	}
	info, err := check.Check(script, compiletest.KernelOptions(spec))
	if err != nil {
		t.Fatal(err)
	}
	out, err := codegen.Compile(script, info, codegen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Start(out, io.Discard, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for range 3 {
		unix.Getppid()
	}
	if err := s.Detach(); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		unix.Getppid()
	}
	if len(s.links) != 1 {
		t.Errorf("%d links open after Detach, want the probe's 1 (closed by Close)", len(s.links))
	}
	var b bytes.Buffer
	if err := s.PrintMaps(&b); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != "@: 3\n" {
		t.Errorf("maps after Detach and 5 more calls:\n%s\nwant @: 3", got)
	}
}
