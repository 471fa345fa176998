package check

import (
	"fmt"
	"path"

	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/lang"
)

// bpftrace's missing_probes (config block): a probe that names what this
// kernel does not have (kprobe:__blk_account_io_start, a function renamed
// since) is an error (skbtrace's default), or is dropped from its list,
// with a note (warn) or without (ignore), so that one script runs on
// kernels before and after the rename. A probe list left with nothing is
// dropped whole; a script left with no probe at all is an error, as a
// script where nothing attaches is in bpftrace.

// dropMissing applies missing_probes to the probes: it records the specs
// this kernel does not have in Info.Missing (the probes are checked
// without them: liveSpecs) and returns the probes left with a spec.
func (c *checker) dropMissing(probes []*lang.Probe) []*lang.Probe {
	policy := c.info.Config.MissingProbes
	if policy == MissingError {
		return probes
	}
	var kept []*lang.Probe
	var firstMissing *lang.ProbeSpec
	for _, p := range probes {
		live := 0
		for _, s := range p.Specs {
			why, missing := c.specMissing(s)
			if !missing {
				live++
				continue
			}
			c.info.Missing[s] = true
			if firstMissing == nil {
				firstMissing = s
			}
			if policy == MissingWarn {
				c.note(fmt.Sprintf("%s: %s; skipped (missing_probes = warn)", s.Text, why))
			}
		}
		if live > 0 {
			kept = append(kept, p)
		} else {
			c.dropped = append(c.dropped, p)
		}
	}
	if len(kept) == 0 && firstMissing != nil {
		c.errorf(firstMissing, "missing_probes drops the probes this kernel does not have, and none of this script's is left: nothing would attach",
			"no probe of this script exists on this kernel")
	}
	return kept
}

// liveSpecs are a probe's specs but those missing_probes drops.
func (c *checker) liveSpecs(p *lang.Probe) []*lang.ProbeSpec {
	if len(c.info.Missing) == 0 {
		return p.Specs
	}
	var live []*lang.ProbeSpec
	for _, s := range p.Specs {
		if !c.info.Missing[s] {
			live = append(live, s)
		}
	}
	return live
}

// specMissing reports whether a probe spec names a function or tracepoint
// this kernel does not have, and says what is missing. It answers as the
// checker's own resolution does (spec, funcGlob, expandSpecs): what it
// calls missing is what would be an error there.
func (c *checker) specMissing(s *lang.ProbeSpec) (string, bool) {
	switch s.Kind {
	case lang.ProbeUprobe, lang.ProbeUretprobe:
		return userSpecMissing(s)
	case lang.ProbeKprobe, lang.ProbeKretprobe, lang.ProbeFentry, lang.ProbeFexit:
		if IsFuncGlob(s.Target) {
			if _, err := path.Match(s.Target, ""); err != nil {
				return "", false // a bad pattern stays an error
			}
			found := false
			c.eachGlobFunc(s.Target, func(string, *btf.FuncProto) bool { found = true; return false })
			return "no traceable kernel function matches " + s.Target, !found
		}
		var fn *btf.Func
		if err := c.opts.BTF.TypeByName(s.Target, &fn); err != nil {
			return "this kernel has no function " + s.Target, true
		}
	case lang.ProbeTracepoint:
		if s.Name == "" {
			return "", false
		}
		if isTracepointGlob(s) {
			names, err := c.matchTracepoints(s.Category, s.Name)
			return "no tracepoint matches " + s.Text, err == nil && len(names) == 0
		}
		var td *btf.Typedef
		exists := c.opts.BTF.TypeByName("btf_trace_"+s.Name, &td) == nil
		if c.opts.TracepointExists != nil {
			exists = c.opts.TracepointExists(s.Category, s.Name)
		}
		return "this kernel has no tracepoint " + s.Category + ":" + s.Name, !exists
	}
	return "", false
}

// droppedAssigns reports whether a map is assigned in a probe that
// missing_probes dropped, for the error where the script reads it.
func (c *checker) droppedAssigns(name string) bool {
	found := false
	for _, p := range c.dropped {
		lang.Inspect(p, func(n lang.Node) bool {
			if a, ok := n.(*lang.AssignStmt); ok {
				if m, ok := a.Target.(*lang.MapExpr); ok && m.Name == name {
					found = true
				}
			}
			return !found
		})
	}
	return found
}
