package pipeline

import (
	"fmt"
	"path"
	"strings"

	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/lang/types"
	"github.com/skbtrace/skbtrace/runtime/kernel"
	"github.com/skbtrace/skbtrace/runtime/session"
)

// listSkbRet lists what skbret:GLOB attaches to: on a function backend,
// the functions skb:GLOB does, since a return is a function's. With -v,
// each line has the prototype, the return type (retval's) and the skb's
// position. Where no function backend works, skb: falls back to
// tracepoints, which have no returns: nothing is listed, and it says why.
func (l *lister) listSkbRet(glob string) error {
	if _, err := path.Match(glob, ""); err != nil {
		return fmt.Errorf("-l %q: %v", "skbret:"+glob, err)
	}
	d, err := l.discovery()
	if err != nil {
		return err
	}
	fns := d.Match(glob)
	if len(fns) == 0 {
		return fmt.Errorf("no probe matches %q", "skbret:"+glob)
	}
	why, fallback, err := tracepointFallbackWhy(l.Config, d)
	if err != nil {
		return err
	}
	if fallback {
		return fmt.Errorf("skbret:%s attaches to nothing on this kernel: %s, so skb: probes fall back to the tracepoints that carry an sk_buff, and tracepoints have no returns (skbtrace -l 'skb:%s' lists what skb: attaches to)",
			glob, why, glob)
	}
	spec, err := l.verboseBTF()
	if err != nil {
		return err
	}
	for _, f := range fns {
		if !l.Verbose {
			l.printf("skbret:%s", f.Name)
			continue
		}
		l.printf("skbret:%s%s  [retval: %s; skb: arg%d]", f.Name, prototype(spec, f), returnType(spec, f), f.SkbArg)
	}
	return nil
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
func tracepointFallbackWhy(cfg Config, d *kernel.Discovery) (why string, fallback bool, err error) {
	backend, reasons, err := session.ChooseBackend(cfg.Backend, ProbeOn(d))
	switch {
	case err != nil || backend != session.BackendTracepoint:
		return "", false, err
	case len(reasons) == 0:
		return "--backend tracepoint was asked for", true, nil
	}
	return "no function backend works here (" + strings.Join(reasons, "; ") + ")", true, nil
}
