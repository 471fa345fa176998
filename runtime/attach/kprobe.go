package attach

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"github.com/skbtrace/skbtrace/codegen"
)

// kprobe attaches a kprobe or kretprobe program to its one function.
func kprobe(a codegen.Attach, prog *ebpf.Program) (link.Link, error) {
	attach := link.Kprobe
	if a.Return {
		attach = link.Kretprobe
	}
	l, err := attach(a.Func, prog, nil)
	if err != nil {
		return nil, fmt.Errorf("attach %s: %w", a.Text, explain(err, "kprobe"))
	}
	return l, nil
}
