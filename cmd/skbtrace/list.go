package main

import (
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/lang/types"
	"github.com/skbtrace/skbtrace/runtime"
	"github.com/skbtrace/skbtrace/runtime/kernel"
)

// list prints the probes matching a pattern, as bpftrace -l does: the skb:
// functions discovery finds, and the tracepoints that carry an sk_buff. The
// pattern matches the whole probe (skb:ip_*) or the bare name (ip_*). With
// -v, each line has the prototype and the skb's position. A pattern of
// another kind (tracepoint:net:*, kprobe:tcp_*) or `struct NAME` is
// listOther's, skbret:GLOB listSkbRet's. Where skb: falls back to
// tracepoints, it says so: the functions listed do not attach here.
func list(o options, pattern string, stdout, stderr io.Writer) int {
	if strings.HasPrefix(pattern, "bpf:") || strings.HasPrefix(pattern, "bpfret:") {
		return listBPF(pattern, stdout, stderr)
	}
	if code, ok := listOther(o, pattern, stdout, stderr); ok {
		return code
	}
	if glob, ok := strings.CutPrefix(pattern, "skbret:"); ok {
		return listSkbRet(o, glob, stdout, stderr)
	}
	d, _, err := kernel.CachedDiscovery(o.btfFile)
	if err != nil {
		fmt.Fprintf(stderr, "skbtrace: %v\n", err)
		return 1
	}
	spec, ok := verboseBTF(o, stderr)
	if !ok {
		return 1
	}
	matches := func(probe, name string) bool {
		a, _ := path.Match(pattern, probe)
		b, _ := path.Match(pattern, name)
		return a || b
	}
	n, funcs := 0, 0
	for _, f := range d.Funcs {
		probe := "skb:" + f.Name
		if !matches(probe, f.Name) {
			continue
		}
		n++
		funcs++
		if !o.verbose {
			fmt.Fprintln(stdout, probe)
			continue
		}
		fmt.Fprintf(stdout, "%s%s  [skb: arg%d]\n", probe, prototype(spec, f), f.SkbArg)
	}
	if spec == nil {
		spec, err = loadBTF(o.btfFile)
	}
	if err == nil {
		if tracepointCategory("kfree_skb") == "*" {
			fmt.Fprintln(stderr, "skbtrace: tracefs is not mounted, so tracepoint categories show as * (a script may write * too); mount -t tracefs nodev /sys/kernel/tracing to see them")
		}
		for _, tp := range runtime.ResolveSkbFallback(spec, map[string]bool{"*": true})["*"] {
			probe := "tracepoint:" + tracepointCategory(tp.Name) + ":" + tp.Name
			if !matches(probe, tp.Name) {
				continue
			}
			n++
			if o.verbose {
				probe += fmt.Sprintf("  [skb: args %d]", tp.SkbArg)
			}
			fmt.Fprintln(stdout, probe)
		}
	}
	if n == 0 {
		fmt.Fprintf(stderr, "skbtrace: no probe matches %q\n", pattern)
		return 1
	}
	if funcs == 0 {
		return 0
	}
	why, fallback, err := tracepointFallbackWhy(o, d)
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "skbtrace: the skb: functions listed do not attach on this kernel: %v\n", err)
	case fallback:
		fmt.Fprintf(stderr, "skbtrace: the skb: functions listed do not attach on this kernel: %s, so skb: probes attach to the tracepoint: lines, those that carry an sk_buff (a glob that matches none of them is skipped)\n", why)
	}
	return 0
}

// prototype renders a function's parameters from BTF: (struct sk_buff *skb, ...).
func prototype(spec *btf.Spec, f kernel.SkbFunc) string {
	var fn *btf.Func
	if spec.TypeByName(f.Name, &fn) != nil {
		if f.Module != "" {
			return "(in module " + f.Module + ")"
		}
		return "(...)"
	}
	proto, ok := fn.Type.(*btf.FuncProto)
	if !ok {
		return "(...)"
	}
	var ps []string
	for _, p := range proto.Params {
		ps = append(ps, strings.TrimSpace(types.CName(p.Type)+" "+p.Name))
	}
	return "(" + strings.ReplaceAll(strings.Join(ps, ", "), "* ", "*") + ")"
}

// tracepointCategory finds a tracepoint's category in tracefs' events
// directory; where tracefs is not mounted it is shown as *.
func tracepointCategory(name string) string {
	if c := kernel.TracepointCategory(name); c != "" {
		return c
	}
	return "*"
}

// verboseBTF loads the kernel's BTF where -lv prints prototypes (nil for
// -l); false where it cannot, said on stderr.
func verboseBTF(o options, stderr io.Writer) (*btf.Spec, bool) {
	if !o.verbose {
		return nil, true
	}
	spec, err := loadBTF(o.btfFile)
	if err != nil {
		fmt.Fprintf(stderr, "skbtrace: %v\n", err)
		return nil, false
	}
	return spec, true
}
