package check_test

import (
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/internal/testkit"
)

// kernelBTF is the running kernel's BTF (testkit.KernelBTF: the test is
// skipped without it), under the short name the checker's tests use.
func kernelBTF(tb testing.TB) *btf.Spec {
	tb.Helper()
	return testkit.KernelBTF(tb)
}
