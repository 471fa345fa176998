package session

import (
	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/features"
	"github.com/cilium/ebpf/link"
)

// On the kprobe backend too, where the kernel gives kprobes attach cookies
// (Linux 5.15 on: a perf event's BPF link carries one, which
// bpf_get_attach_cookie reads), an skb: probe is one program for every
// function, given each function's cookie (codegen's cookie.go): the
// verifier checks it once instead of once per place of the skb among the
// arguments (a dozen for --filter), and each function's kprobe costs what
// it did. Before 5.15 it is a program per place, as before.

// KprobeCookies reports whether this kernel's kprobe programs may read an
// attach cookie. The probe loads one small program, once per process.
func KprobeCookies() bool {
	return features.HaveProgramHelper(ebpf.Kprobe, asm.FnGetAttachCookie) == nil
}

// attachKprobe attaches a kprobe, or a kretprobe for an skbret: program;
// cookie, where not 0, is the one a Cookie program reads.
func attachKprobe(prog *ebpf.Program, fn string, ret bool, cookie uint64) (link.Link, error) {
	var opts *link.KprobeOptions
	if cookie != 0 {
		opts = &link.KprobeOptions{Cookie: cookie}
	}
	if ret {
		return link.Kretprobe(fn, prog, opts)
	}
	return link.Kprobe(fn, prog, opts)
}
