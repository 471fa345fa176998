package attach

import (
	"errors"
	"fmt"
	"os"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"github.com/skbtrace/skbtrace/codegen"
)

// uprobe attaches a uprobe or uretprobe program to its function, at
// the offset in the binary's file the checker found: one perf event link
// per function, for every process that runs the binary.
func uprobe(p *codegen.Program, prog *ebpf.Program) (link.Link, error) {
	a := p.Attach
	name := a.Text
	ex, err := link.OpenExecutable(a.Binary)
	if err != nil {
		return nil, fmt.Errorf("attach %s: %w", name, err)
	}
	opts := &link.UprobeOptions{Address: a.Offset}
	var l link.Link
	if a.Return {
		l, err = ex.Uretprobe(a.Func, prog, opts)
	} else {
		l, err = ex.Uprobe(a.Func, prog, opts)
	}
	if err != nil {
		return nil, fmt.Errorf("attach %s: %w", name, explainUprobe(err))
	}
	return l, nil
}

// haveUprobes reports whether the kernel has uprobes: the perf "uprobe"
// PMU is registered where CONFIG_UPROBE_EVENTS is built in.
func haveUprobes() bool {
	_, err := os.Stat("/sys/bus/event_source/devices/uprobe")
	return err == nil
}

// explainUprobe says which kernel feature is missing.
func explainUprobe(err error) error {
	switch {
	case !haveUprobes() && errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("this kernel has no uprobes (CONFIG_UPROBE_EVENTS is off: no uprobe PMU in /sys/bus/event_source/devices): %w", err)
	case errors.Is(err, os.ErrPermission):
		return fmt.Errorf("the kernel refused (%w): run as root", err)
	}
	return err
}
