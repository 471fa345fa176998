package attach

import (
	"os"
	"strings"
	"testing"
)

// TestKprobeOffsetBounds sizes ip_rcv from this kernel's /proc/kallsyms:
// an offset inside it passes, one past its end is refused with its size.
func TestKprobeOffsetBounds(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("kallsyms lists addresses to root only; run as root")
	}
	size, _, err := kallsymsSize("ip_rcv")
	if err != nil {
		t.Fatal(err)
	}
	if size == 0 || size > 1<<16 {
		t.Fatalf("ip_rcv is %d bytes long by kallsyms", size)
	}
	if err := checkKprobeOffset("ip_rcv", 4); err != nil {
		t.Errorf("offset 4: %v", err)
	}
	err = checkKprobeOffset("ip_rcv", size)
	if err == nil || !strings.Contains(err.Error(), "is outside ip_rcv") {
		t.Errorf("offset %d (its size): %v", size, err)
	}
	if _, _, err := kallsymsSize("no_such_function_here"); err == nil {
		t.Error("a function kallsyms lacks was sized")
	}
}
