package attach

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

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
	var opts *link.KprobeOptions
	if a.Offset > 0 {
		if err := checkKprobeOffset(a.Func, a.Offset); err != nil {
			return nil, fmt.Errorf("attach %s: %w", a.Text, err)
		}
		opts = &link.KprobeOptions{Offset: a.Offset}
	}
	l, err := attach(a.Func, prog, opts)
	if err != nil {
		if a.Offset > 0 && errors.Is(err, unix.EILSEQ) {
			return nil, fmt.Errorf("attach %s: offset %d of %s is not at the start of an instruction (the kernel refuses it: %w)", a.Text, a.Offset, a.Func, err)
		}
		return nil, fmt.Errorf("attach %s: %w", a.Text, explain(err, "kprobe"))
	}
	return l, nil
}
