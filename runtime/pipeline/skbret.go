package pipeline

import (
	"maps"
	"slices"
	"strings"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/runtime/kernel"
	"github.com/skbtrace/skbtrace/runtime/session"
)

// skbRetSpecs are the script's skbret: specs, in order.
func skbRetSpecs(script *lang.Script) []*lang.ProbeSpec {
	var out []*lang.ProbeSpec
	for _, p := range script.Probes {
		for _, s := range p.Specs {
			if s.Kind == lang.ProbeSkbRet {
				out = append(out, s)
			}
		}
	}
	return out
}

// noReturns is the error for skbret: probes where skb: falls back to
// tracepoints: a return is a function's, which only a function backend
// attaches to.
func noReturns(script *lang.Script, specs []*lang.ProbeSpec, reasons []string) error {
	d := &lang.Diagnostics{Src: script.Src}
	why := "--backend tracepoint was asked for"
	if len(reasons) > 0 {
		why = "no function backend works on this kernel (" + strings.Join(reasons, "; ") + ")"
	}
	for _, s := range specs {
		d.Add(s.At, "returns need a function backend: kprobe-multi, fentry (fexit) or kprobe (kretprobe); "+why,
			"%s cannot be traced here: tracepoints have no returns", s.Text)
	}
	return d.Err()
}

// retAttach fills in where skbret: globs attach on a function backend: the
// return programs by glob, and one entry program for every function any
// of them matches.
func retAttach(backend session.Backend, disc *kernel.Discovery, specs []*lang.ProbeSpec, opts *codegen.Options, fa *session.FuncAttach) {
	if len(specs) == 0 {
		return
	}
	opts.RetTargets = map[string][]codegen.SkbTarget{}
	fa.Ret = map[string][]kernel.SkbFunc{}
	entries := map[string]kernel.SkbFunc{}
	for _, s := range specs {
		if _, done := fa.Ret[s.Target]; done {
			continue
		}
		fns := disc.Match(s.Target)
		fa.Ret[s.Target] = fns
		opts.RetTargets[s.Target] = retTargets(backend, fns)
		for _, f := range fns {
			entries[f.Name] = f
		}
	}
	for _, n := range slices.Sorted(maps.Keys(entries)) {
		f := entries[n]
		fa.Entries = append(fa.Entries, f)
		tg := codegen.SkbTarget{SkbArg: f.SkbArg}
		if backend == session.BackendFentry {
			tg.Name, tg.Fentry = f.Name, true
		} else if slices.Contains(opts.EntryTargets, tg) {
			continue
		}
		opts.EntryTargets = append(opts.EntryTargets, tg)
	}
	if backend != session.BackendFentry {
		slices.SortFunc(opts.EntryTargets, func(a, b codegen.SkbTarget) int { return a.SkbArg - b.SkbArg })
	}
}

// retTargets are the return programs of an skbret: glob: with fentry, an
// fexit program per function; with kprobes, one per return class, each
// attached to the functions that return so.
func retTargets(backend session.Backend, fns []kernel.SkbFunc) []codegen.SkbTarget {
	var tgs []codegen.SkbTarget
	for _, f := range fns {
		tg := codegen.SkbTarget{SkbArg: f.SkbArg, Return: true, Ret: codegen.RetClass(f.Ret)}
		if backend == session.BackendFentry {
			tg.Name, tg.Fentry, tg.NArgs = f.Name, true, f.NArgs
		} else if slices.ContainsFunc(tgs, func(t codegen.SkbTarget) bool { return t.Ret == codegen.RetClass(f.Ret) }) {
			continue
		} else {
			tg.SkbArg = -1
		}
		tgs = append(tgs, tg)
	}
	if backend != session.BackendFentry {
		slices.SortFunc(tgs, func(a, b codegen.SkbTarget) int { return strings.Compare(a.Ret.String(), b.Ret.String()) })
	}
	return tgs
}
