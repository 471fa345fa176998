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

// listSkbRet lists what skbret:GLOB attaches to: on a function backend,
// the functions skb:GLOB does, since a return is a function's. With -v,
// each line has the prototype, the return type (retval's) and the skb's
// position. Where no function backend works, skb: falls back to
// tracepoints, which have no returns: nothing is listed, and it says why.
func listSkbRet(o options, glob string, stdout, stderr io.Writer) int {
	if _, err := path.Match(glob, ""); err != nil {
		fmt.Fprintf(stderr, "skbtrace: -l %q: %v\n", "skbret:"+glob, err)
		return 1
	}
	d, _, err := kernel.CachedDiscovery(o.btfFile)
	if err != nil {
		fmt.Fprintf(stderr, "skbtrace: %v\n", err)
		return 1
	}
	fns := d.Match(glob)
	if len(fns) == 0 {
		fmt.Fprintf(stderr, "skbtrace: no probe matches %q\n", "skbret:"+glob)
		return 1
	}
	why, fallback, err := tracepointFallbackWhy(o, d)
	if err != nil {
		fmt.Fprintf(stderr, "skbtrace: %v\n", err)
		return 1
	}
	if fallback {
		fmt.Fprintf(stderr, "skbtrace: skbret:%s attaches to nothing on this kernel: %s, so skb: probes fall back to the tracepoints that carry an sk_buff, and tracepoints have no returns (skbtrace -l 'skb:%s' lists what skb: attaches to)\n",
			glob, why, glob)
		return 1
	}
	spec, ok := verboseBTF(o, stderr)
	if !ok {
		return 1
	}
	for _, f := range fns {
		if !o.verbose {
			fmt.Fprintf(stdout, "skbret:%s\n", f.Name)
			continue
		}
		fmt.Fprintf(stdout, "skbret:%s%s  [retval: %s; skb: arg%d]\n", f.Name, prototype(spec, f), returnType(spec, f), f.SkbArg)
	}
	return 0
}

// returnType is what a function returns, from BTF (struct sk_buff *, int,
// void), or, for a module's function vmlinux's BTF does not describe, how
// skbret: reads it (ptr, s32, void).
func returnType(spec *btf.Spec, f kernel.SkbFunc) string {
	var fn *btf.Func
	if spec.TypeByName(f.Name, &fn) == nil {
		if proto, ok := fn.Type.(*btf.FuncProto); ok {
			return strings.TrimSpace(types.CName(proto.Return))
		}
	}
	return f.Ret.String()
}

// tracepointFallbackWhy says whether skb: falls back to tracepoints on
// this kernel, as tracing would choose, and why: --backend tracepoint, or
// no function backend works. err is a forced function backend's failure.
func tracepointFallbackWhy(o options, d *kernel.Discovery) (why string, fallback bool, err error) {
	backend, reasons, err := runtime.ChooseBackend(o.backend, probeOn(d))
	switch {
	case err != nil || backend != runtime.BackendTracepoint:
		return "", false, err
	case len(reasons) == 0:
		return "--backend tracepoint was asked for", true, nil
	}
	return "no function backend works here (" + strings.Join(reasons, "; ") + ")", true, nil
}
