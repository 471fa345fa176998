package main

import (
	"strings"
	"testing"
)

// TestFuncGlobsOnThisKernel runs kprobe and fentry globs against this
// kernel: they trace (where it has kprobes, or lets fentry load), or fail
// with one line that names the probe and what the kernel lacks, never a
// per-function list of refusals. The attach itself is proven in the VM
// suite (test/vm/cases/fn-glob-*.case).
func TestFuncGlobsOnThisKernel(t *testing.T) {
	for _, s := range []string{`kprobe:ip_rcv* { @[func] = count() }`, `kretprobe:ip_rcv* { @[func, retval] = count() }`,
		`fentry:ip_rcv* { @[func] = count() }`, `fexit:ip_rcv* { @[func, retval] = count() }`,
		// The glob inside the name, or first.
		`kprobe:tcp_*_rcv { @[func] = count() }`, `fentry:*_rcv_established { @[func] = count() }`} {
		code, _, errs := runCLI(t, "-e", s, "--duration", "20ms")
		if code == 0 {
			t.Logf("%s traces on this kernel", s)
			continue
		}
		probe := s[:strings.Index(s, " ")]
		lines := strings.Split(strings.TrimSpace(errs), "\n")
		if len(lines) != 1 || !strings.HasPrefix(lines[0], "skbtrace: "+probe+": this kernel ") {
			t.Errorf("%s: exit %d, %q; want one line naming the probe and the missing feature", s, code, errs)
		}
	}
}
