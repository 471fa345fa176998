// Package attach attaches one compiled program to its one attach point,
// as codegen.Attach describes it, the way cilium/ebpf's link package does:
// a file per kind (tracepoint.go, tracing.go for tp_btf, fentry and fexit,
// kprobe.go, uprobe.go), each error saying which kernel feature is missing
// (explain.go). The kinds that fan one program out over many functions or
// programs (skb:, kprobe globs, bpf:) are the session's, which keeps their
// statistics and progress.
//
// It imports codegen and runtime/kernel only.
package attach

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"github.com/skbtrace/skbtrace/codegen"
)

// Program attaches prog, compiled as p, to the one attach point p.Attach
// names: a tracepoint, tp_btf, fentry or fexit, kprobe or kretprobe, uprobe
// or uretprobe.
func Program(p *codegen.Program, prog *ebpf.Program) (link.Link, error) {
	a := p.Attach
	switch a.Kind {
	case codegen.AttachTracepoint:
		return tracepoint(a, prog)
	case codegen.AttachTpBTF, codegen.AttachFentry, codegen.AttachFexit:
		return tracing(p, prog)
	case codegen.AttachUprobe:
		return uprobe(p, prog)
	case codegen.AttachKprobe:
		return kprobe(a, prog)
	}
	return nil, fmt.Errorf("attach %s: %s probes are not attached yet", a.Text, a.ProbeKind)
}
