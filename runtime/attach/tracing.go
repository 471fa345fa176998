package attach

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"github.com/skbtrace/skbtrace/codegen"
)

// tracing attaches a tp_btf, fentry or fexit program: its target was given
// when it was loaded, so the link needs only its attach type.
func tracing(p *codegen.Program, prog *ebpf.Program) (link.Link, error) {
	a := p.Attach
	l, err := link.AttachTracing(link.TracingOptions{Program: prog, AttachType: p.Prog.AttachType})
	if err != nil {
		return nil, fmt.Errorf("attach %s: %w", a.Text, explain(err, a.ProbeKind))
	}
	return l, nil
}
