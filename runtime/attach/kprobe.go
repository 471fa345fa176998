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
		if a.Offset > 0 && (errors.Is(err, unix.EILSEQ) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOENT)) {
			// The function exists and the offset is inside it: the
			// kernel refused the address itself (x86-64's kprobes say
			// EILSEQ, perf's kprobe PMU passes it on as ENOENT, arm64's
			// EINVAL for an unaligned one).
			return nil, fmt.Errorf("attach %s: offset %d of %s is not at the start of an instruction the kernel can probe (it refused the address: %v)", a.Text, a.Offset, a.Func, kernelErrno(err))
		}
		return nil, fmt.Errorf("attach %s: %w", a.Text, explain(err, "kprobe"))
	}
	return l, nil
}

// kernelErrno is the errno err carries, said alone, or err where it
// carries none of those a kprobe's creation returns.
func kernelErrno(err error) error {
	for _, e := range []unix.Errno{unix.EILSEQ, unix.EINVAL, unix.ENOENT} {
		if errors.Is(err, e) {
			return e
		}
	}
	return err
}
