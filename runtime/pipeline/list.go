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

// List gives -l's listing of a pattern to emit, a line at a time as it
// finds them (with -v, lines of detail after some); its notes go to
// Config.Warn in between, where they belong; err says where nothing
// matches or the listing failed (after the lines it gave).
func List(cfg Config, pattern string, emit func(line string)) error {
	return (&lister{Config: cfg, emit: emit}).listPatterns(pattern)
}

// lister is a listing under way.
type lister struct {
	Config
	emit func(line string)
}

// printf gives a line.
func (l *lister) printf(format string, args ...any) {
	l.emit(fmt.Sprintf(format, args...))
}

// list lists the probes matching a pattern, as bpftrace -l does: the skb:
// functions discovery finds, and the tracepoints that carry an sk_buff. The
// pattern matches the whole probe (skb:ip_*) or the bare name (ip_*). With
// -v, each line has the prototype and the skb's position. A pattern of
// another kind (tracepoint:net:*, kprobe:tcp_*) or `struct NAME` is
// listOther's, skbret:GLOB listSkbRet's. Where skb: falls back to
// tracepoints, it says so: the functions listed do not attach here.
func (l *lister) list(pattern string) error {
	if strings.HasPrefix(pattern, "bpf:") || strings.HasPrefix(pattern, "bpfret:") {
		return l.listBPF(pattern)
	}
	if err, ok := l.listOther(pattern); ok {
		return err
	}
	if glob, ok := strings.CutPrefix(pattern, "skbret:"); ok {
		return l.listSkbRet(glob)
	}
	d, err := l.discovery()
	if err != nil {
		return err
	}
	spec, err := l.verboseBTF()
	if err != nil {
		return err
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
		if !l.Verbose {
			l.printf("%s", probe)
			continue
		}
		l.printf("%s%s  [skb: arg%d]", probe, prototype(spec, f), f.SkbArg)
	}
	if spec == nil {
		spec, err = loadBTF(l.BTFFile)
	}
	if err == nil {
		if tracepointCategory("kfree_skb") == "*" {
			l.warn("tracefs is not mounted, so tracepoint categories show as * (a script may write * too); mount -t tracefs nodev /sys/kernel/tracing to see them")
		}
		for _, tp := range session.ResolveSkbFallback(spec, map[string]bool{"*": true})["*"] {
			probe := "tracepoint:" + tracepointCategory(tp.Name) + ":" + tp.Name
			if !matches(probe, tp.Name) {
				continue
			}
			n++
			if l.Verbose {
				probe += fmt.Sprintf("  [skb: args %d]", tp.SkbArg)
			}
			l.printf("%s", probe)
		}
	}
	if n == 0 {
		return fmt.Errorf("no probe matches %q", pattern)
	}
	if funcs == 0 {
		return nil
	}
	why, fallback, err := tracepointFallbackWhy(l.Config, d)
	switch {
	case err != nil:
		l.warn(fmt.Sprintf("the skb: functions listed do not attach on this kernel: %v", err))
	case fallback:
		l.warn("the skb: functions listed do not attach on this kernel: " + why + ", so skb: probes attach to the tracepoint: lines, those that carry an sk_buff (a glob that matches none of them is skipped)")
	}
	return nil
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
// -l), or why it cannot.
func (l *lister) verboseBTF() (*btf.Spec, error) {
	if !l.Verbose {
		return nil, nil
	}
	return loadBTF(l.BTFFile)
}
