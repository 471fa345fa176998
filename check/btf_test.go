package check_test

import (
	"sync"
	"testing"

	"github.com/cilium/ebpf/btf"
)

var (
	btfOnce sync.Once
	btfSpec *btf.Spec
	btfErr  error
)

// kernelBTF loads the running kernel's BTF once per test binary. The checker
// resolves against the real kernel; without BTF there is nothing to check.
func kernelBTF(tb testing.TB) *btf.Spec {
	tb.Helper()
	btfOnce.Do(func() { btfSpec, btfErr = btf.LoadKernelSpec() })
	if btfErr != nil {
		tb.Skipf("no kernel BTF (/sys/kernel/btf/vmlinux): %v", btfErr)
	}
	return btfSpec
}
