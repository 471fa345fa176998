package pipeline

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/internal/phase"
	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/runtime/kernel"
	"github.com/skbtrace/skbtrace/runtime/session"
)

// skbChoice is how skb: probes may attach on this kernel: the function
// backends that work (--backend's, or auto's candidates), with why the
// others do not, and the discovery of the functions they attach to.
type skbChoice struct {
	globs   map[string]*lang.ProbeSpec
	works   []session.Backend
	reasons []string
	disc    *kernel.Discovery
}

// skbBackends finds how skb: probes may attach: to the kernel functions
// that discovery finds, with the backend --backend names or those of auto
// that work (kprobe-multi alone where it does; else fentry and kprobe,
// weighed by cost once the script is compiled: Plan.compile). Where the
// script has no skb: probes it returns nil.
func skbBackends(cfg Config, script *lang.Script) (*skbChoice, error) {
	// globs are the skb: patterns, each with where it is first written.
	globs := map[string]*lang.ProbeSpec{}
	for _, p := range script.Probes {
		for _, s := range p.Specs {
			if (s.Kind == lang.ProbeSkb || s.Kind == lang.ProbeSkbRet) && globs[s.Target] == nil {
				globs[s.Target] = s
			}
		}
	}
	if len(globs) == 0 {
		return nil, nil
	}
	c := &skbChoice{globs: globs}
	probe := func(b session.Backend) error {
		if c.disc == nil {
			d, _, err := kernel.CachedDiscovery(cfg.BTFFile)
			if err != nil {
				return err
			}
			c.disc = d
			phase.Mark("discovery")
		}
		return ProbeOn(c.disc)(b)
	}
	works, reasons, err := session.WorkingBackends(cfg.Backend, probe)
	phase.Mark("backend probe")
	c.works, c.reasons = works, reasons
	return c, err
}

// shape is what auto weighs the backends by: the functions the skb:
// globs match, and the largest skb: program as compiled for one of them.
func (c *skbChoice) shape(out *codegen.Output) session.Shape {
	var sh session.Shape
	for g := range c.globs {
		sh.Funcs += len(c.disc.Match(g))
	}
	for _, p := range out.Programs {
		if p.Attach.Kind == codegen.AttachSkbFuncs {
			sh.Insns = max(sh.Insns, len(p.Prog.Instructions))
		}
	}
	return sh
}

// skbBackend decides how skb: probes attach with backend b (one of
// c.works, or "" for the tracepoint fallback where none works); weighed
// is what auto's choice weighed ("" where it had one candidate).
func skbBackend(cfg Config, script *lang.Script, whole func() (*btf.Spec, error), c *skbChoice, backend session.Backend, weighed string) (codegen.Options, *session.FuncAttach, error) {
	if c == nil {
		return codegen.Options{}, nil, nil
	}
	globs, reasons, disc := c.globs, c.reasons, c.disc
	if backend == "" {
		backend = session.BackendTracepoint
	}
	if rets := skbRetSpecs(script); backend == session.BackendTracepoint && len(rets) > 0 {
		return codegen.Options{}, nil, noReturns(script, rets, reasons)
	}
	if backend == session.BackendTracepoint {
		spec, err := whole()
		if err != nil {
			return codegen.Options{}, nil, err
		}
		return tracepointFallback(cfg, script, globs, reasons, spec)
	}
	if cfg.Backend == "auto" || cfg.Backend == "" {
		cfg.warn(fmt.Sprintf("skb: probes attach with %s (%s)", backend, session.AutoWhy(backend, reasons, weighed)))
	}
	if cfg.BTFFile == "" && kernel.ModuleBTFMissing() {
		cfg.warn("this kernel has no BTF for its modules (Linux 5.11 added it): skb: probes cover vmlinux's functions; kprobe:FN still traces a module's function")
	}
	opts := codegen.Options{SkbTargets: map[string][]codegen.SkbTarget{}}
	fa := &session.FuncAttach{Backend: backend, Funcs: map[string][]kernel.SkbFunc{}}
	for _, g := range slices.Sorted(maps.Keys(globs)) {
		// A name that matches nothing compiles to no program.
		fns := disc.Match(g)
		if len(fns) > 0 {
			fa.Funcs[g] = fns
		}
		opts.SkbTargets[g] = funcTargets(backend, fns)
	}
	if err := unmatchedSkb(script, func(g string) bool { return len(fa.Funcs[g]) > 0 }, cfg.warn); err != nil {
		return codegen.Options{}, nil, err
	}
	retAttach(backend, disc, skbRetSpecs(script), &opts, fa)
	return opts, fa, nil
}

// funcTargets are the programs an skb: glob compiles to on a function
// backend: one per function with fentry; with kprobe-multi, and kprobes
// where they take attach cookies (5.15 on), one for every function, which
// reads where its skb and drop reason are from the attach cookie the
// runtime gives each; with older kprobes, one per place of the skb and the
// drop reason among the arguments, each attached by the runtime to every
// function whose arguments are so placed.
func funcTargets(backend session.Backend, fns []kernel.SkbFunc) []codegen.SkbTarget {
	cookies := backend == session.BackendKprobeMulti || backend == session.BackendKprobe && session.KprobeCookies()
	if cookies && len(fns) > 0 {
		return []codegen.SkbTarget{{SkbArg: -1, Cookie: true}}
	}
	var tgs []codegen.SkbTarget
	seen := map[codegen.SkbTarget]bool{}
	for _, f := range fns {
		tg := codegen.SkbTarget{SkbArg: f.SkbArg, HasReason: f.ReasonArg >= 0, ReasonArg: max(f.ReasonArg, 0)}
		if backend == session.BackendFentry {
			tg.Name, tg.Fentry = f.Name, true
		} else if seen[tg] {
			continue
		}
		seen[tg] = true
		tgs = append(tgs, tg)
	}
	if backend != session.BackendFentry {
		slices.SortFunc(tgs, func(a, b codegen.SkbTarget) int {
			if a.SkbArg != b.SkbArg {
				return a.SkbArg - b.SkbArg
			}
			return a.ReasonArg - b.ReasonArg
		})
	}
	return tgs
}

// unmatchedSkb judges the skb: names that match nothing here. A probe
// whose names all match nothing is a mistake: an error at each, before
// anything is attached. A probe that lists alternatives (skb:kfree_skb_reason,
// skb:sk_skb_reason_drop: one kernel has the one, another the other) attaches
// to those that match, and the rest are named to warn.
func unmatchedSkb(script *lang.Script, matches func(glob string) bool, warn func(string)) error {
	d := &lang.Diagnostics{Src: script.Src}
	warned := map[string]bool{}
	for _, p := range script.Probes {
		var missing []*lang.ProbeSpec
		for _, s := range p.Specs {
			if (s.Kind == lang.ProbeSkb || s.Kind == lang.ProbeSkbRet) && !matches(s.Target) {
				missing = append(missing, s)
			}
		}
		if len(missing) == len(p.Specs) {
			for _, s := range missing {
				d.Add(s.At, "skb: probes attach to the kernel functions that take a struct sk_buff * or, where those cannot be probed, to the tracepoints that carry one: skbtrace -l 'skb:*' lists them",
					"%s matches nothing to trace", s.Text)
			}
			continue
		}
		for _, s := range missing {
			if !warned[s.Text] {
				warned[s.Text] = true
				warn(s.Text + " matches nothing on this kernel; its probe attaches to the others it lists")
			}
		}
	}
	return d.Err()
}

// ProbeOn tries a backend on a function of discovery's, as
// session.ChooseBackend asks.
func ProbeOn(d *kernel.Discovery) func(session.Backend) error {
	return func(b session.Backend) error {
		if len(d.Funcs) == 0 {
			return fmt.Errorf("no traceable function takes a struct sk_buff *")
		}
		return session.ProbeBackend(b, probeTarget(d))
	}
}

// probeTarget is the function the backends are tried on: one every kernel
// has where possible.
func probeTarget(d *kernel.Discovery) string {
	for _, f := range d.Funcs {
		if f.Name == "kfree_skbmem" || f.Name == "ip_rcv" {
			return f.Name
		}
	}
	return d.Funcs[0].Name
}

// tracepointFallback attaches skb: probes to every tracepoint that carries
// an sk_buff, saying why.
func tracepointFallback(cfg Config, script *lang.Script, globs map[string]*lang.ProbeSpec, reasons []string, spec *btf.Spec) (codegen.Options, *session.FuncAttach, error) {
	names := map[string]bool{}
	for g := range globs {
		names[g] = true
	}
	targets := session.ResolveSkbFallback(spec, names)
	// A glob that names functions only (skb:ip_rcv*) is skipped here, as
	// bpftrace skips a probe it cannot attach; one that matches neither a
	// function nor a tracepoint is a mistake.
	disc, _, discErr := kernel.CachedDiscovery(cfg.BTFFile)
	matches := func(g string) bool {
		return len(targets[g]) > 0 || discErr != nil || len(disc.Match(g)) > 0
	}
	if err := unmatchedSkb(script, matches, cfg.warn); err != nil {
		return codegen.Options{}, nil, err
	}
	var skipped []string
	for _, g := range slices.Sorted(maps.Keys(targets)) {
		if len(targets[g]) == 0 && matches(g) {
			skipped = append(skipped, g)
		}
	}
	if len(reasons) > 0 {
		cfg.warn("no function backend works on this kernel, so skb: probes fall back to the tracepoints that carry an sk_buff. " + strings.Join(reasons, "; "))
	}
	if !ignoresMissing(script) {
		for _, g := range skipped {
			cfg.warn("skb:" + g + " matches no tracepoint that carries an sk_buff; skipped")
		}
	}
	for _, g := range slices.Sorted(maps.Keys(targets)) {
		if len(targets[g]) > 0 {
			cfg.warn(fmt.Sprintf("skb:%s attaches to the %d tracepoints that carry an sk_buff", g, len(targets[g])))
		}
	}
	return codegen.Options{SkbTargets: targets}, nil, nil
}

// ignoresMissing reports whether the script's config block sets
// missing_probes = "ignore": a probe skipped here is then not said, as
// bpftrace says nothing of a probe it skips so.
func ignoresMissing(script *lang.Script) bool {
	if script.Config == nil {
		return false
	}
	for _, e := range script.Config.Entries {
		k := strings.TrimPrefix(strings.ToLower(e.Key), "bpftrace_")
		if k == "missing_probes" {
			return e.Value == check.MissingIgnore
		}
	}
	return false
}
