package attach

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/runtime/kernel"
)

// tracepoint attaches a classic tracepoint program through tracefs.
func tracepoint(a codegen.Attach, prog *ebpf.Program) (link.Link, error) {
	if _, _, err := kernel.Tracefs(); err != nil {
		return nil, fmt.Errorf("attach %s: %w", a.Text, err)
	}
	l, err := link.Tracepoint(a.Category, a.Name, prog, nil)
	if err != nil {
		return nil, fmt.Errorf("attach %s: %w", a.Text, explain(err, "tracepoint"))
	}
	return l, nil
}
