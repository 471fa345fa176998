package attach

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/cilium/ebpf"

	"github.com/skbtrace/skbtrace/runtime/kernel"
)

// explain says which kernel feature is missing where attaching failed.
func explain(err error, what string) error {
	switch {
	case what == "kprobe" && !kernel.HaveKprobes():
		return fmt.Errorf("this kernel has no kprobes (CONFIG_KPROBES is off: no kprobe PMU in /sys/bus/event_source/devices); use a tracepoint or fentry:")
	case what == "kprobe" && strings.Contains(err.Error(), "neither debugfs nor tracefs are mounted"):
		return fmt.Errorf("%w; mount it with: mount -t tracefs nodev /sys/kernel/tracing", err)
	case errors.Is(err, os.ErrNotExist) && what == "kprobe":
		return fmt.Errorf("the function cannot be probed (it may be inlined, or blacklisted for kprobes): %w", err)
	case errors.Is(err, os.ErrPermission):
		return fmt.Errorf("the kernel refused (%w): run as root; some kernels also refuse fentry/fexit, use a tracepoint there", err)
	case errors.Is(err, ebpf.ErrNotSupported):
		return fmt.Errorf("this kernel does not support %s programs (%w)", what, err)
	}
	return err
}
