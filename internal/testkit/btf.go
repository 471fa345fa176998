package testkit

import (
	"sync"
	"testing"

	"github.com/cilium/ebpf/btf"
)

var kernelBTF struct {
	once sync.Once
	spec *btf.Spec
	err  error
}

// KernelBTF returns the running kernel's BTF, decoded once per test binary.
// Without it the test is skipped, saying why: the checker and the code
// generator resolve against the real kernel, and without its BTF there is
// nothing to check.
func KernelBTF(tb testing.TB) *btf.Spec {
	tb.Helper()
	kernelBTF.once.Do(func() { kernelBTF.spec, kernelBTF.err = btf.LoadKernelSpec() })
	if kernelBTF.err != nil {
		tb.Skipf("no kernel BTF (/sys/kernel/btf/vmlinux): %v", kernelBTF.err)
	}
	return kernelBTF.spec
}
