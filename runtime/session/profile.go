package session

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/runtime/kernel"
)

// profileEvents are a profile probe's perf events: a software CPU clock on
// every online CPU, each running the probe's perf_event program at the
// probe's rate. Closing them detaches the program. (An ioctl attaches it,
// which kernels before 5.15, without perf_event bpf_links, have too.)
type profileEvents struct {
	fds []int
}

// attachProfile opens the CPU clock on every online CPU at the probe's rate
// (profile:hz:N: a period of 1s/N) or period (profile:ms:N) and attaches
// prog to each.
func attachProfile(spec codegen.Attach, prog *ebpf.Program) (*profileEvents, error) {
	cpus, err := kernel.OnlineCPUs()
	if err != nil {
		return nil, fmt.Errorf("attach %s: %w", spec.Text, err)
	}
	attr := unix.PerfEventAttr{
		Type:   unix.PERF_TYPE_SOFTWARE,
		Config: unix.PERF_COUNT_SW_CPU_CLOCK,
		Sample: spec.Period,
		Bits:   unix.PerfBitDisabled,
	}
	attr.Size = uint32(unsafe.Sizeof(attr))
	if spec.Hz != 0 {
		// A fixed period (the CPU clock counts nanoseconds), not the
		// kernel's adaptive frequency mode: that starts slow and adapts at
		// the scheduler tick, which an idle CPU without ticks (NO_HZ) does
		// not run, so an idle CPU would fire a few times a second, not N.
		attr.Sample = 1e9 / spec.Hz
	}
	pe := &profileEvents{}
	for _, cpu := range cpus {
		fd, err := unix.PerfEventOpen(&attr, -1, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
		if err != nil {
			pe.Close()
			return nil, fmt.Errorf("attach %s: open a CPU clock perf event on CPU %d: %w", spec.Text, cpu, explainPerfOpen(err))
		}
		pe.fds = append(pe.fds, fd)
		if err := unix.IoctlSetInt(fd, unix.PERF_EVENT_IOC_SET_BPF, prog.FD()); err != nil {
			pe.Close()
			return nil, fmt.Errorf("attach %s: attach the program on CPU %d: %w", spec.Text, cpu, err)
		}
		if err := unix.IoctlSetInt(fd, unix.PERF_EVENT_IOC_ENABLE, 0); err != nil {
			pe.Close()
			return nil, fmt.Errorf("attach %s: enable the perf event on CPU %d: %w", spec.Text, cpu, err)
		}
	}
	return pe, nil
}

// Close disables and closes the perf events, which detaches the program.
func (pe *profileEvents) Close() {
	for _, fd := range pe.fds {
		unix.IoctlSetInt(fd, unix.PERF_EVENT_IOC_DISABLE, 0)
		unix.Close(fd)
	}
	pe.fds = nil
}

// explainPerfOpen says what a refused perf_event_open means.
func explainPerfOpen(err error) error {
	switch {
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.ENODEV), errors.Is(err, unix.EOPNOTSUPP):
		return fmt.Errorf("this kernel has no software perf events (CONFIG_PERF_EVENTS): %w", err)
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
		return fmt.Errorf("the kernel refused (%w): run as root, or lower /proc/sys/kernel/perf_event_paranoid", err)
	case errors.Is(err, unix.EINVAL):
		return fmt.Errorf("the kernel refused the rate (%w): at most /proc/sys/kernel/perf_event_max_sample_rate per second", err)
	}
	return err
}
