package check

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/lang"
)

// maxTracepointGlob is how many tracepoints one glob may attach to: bpftrace's
// max_probes default.
const maxTracepointGlob = 1024

// isTracepointGlob reports whether a tracepoint spec names many: a glob in
// its name, or in its category other than a lone * (which stands for
// whichever category has the name).
func isTracepointGlob(s *lang.ProbeSpec) bool {
	return s.Kind == lang.ProbeTracepoint &&
		(strings.ContainsAny(s.Name, "*?[") || s.Category != "*" && strings.ContainsAny(s.Category, "*?["))
}

// expandSpecs puts, in place of each tracepoint glob of a probe list
// (tracepoint:sched:sched*, tracepoint:net:*), a spec for every tracepoint
// it matches, in name order, as bpftrace attaches to each. The tree is not
// changed: the specs are new, with the glob's span. A glob that matches
// nothing is an error, and stays as the one spec, unresolved.
func (c *checker) expandSpecs(specs []*lang.ProbeSpec) (out []*lang.ProbeSpec, missed map[*lang.ProbeSpec]bool) {
	for _, s := range specs {
		if !isTracepointGlob(s) {
			out = append(out, s)
			continue
		}
		if s.Raw {
			out, missed = c.expandRaw(s, out, missed)
			continue
		}
		names, err := c.matchTracepoints(s.Category, s.Name)
		switch {
		case err != nil:
			c.errorf(s, "", "list the tracepoints of %s: %v", s.Text, err)
		case len(names) == 0:
			c.errorf(s, "list them with skbtrace -l 'tracepoint:"+s.Category+":*'", "no tracepoint matches %s", s.Text)
		case len(names) > maxTracepointGlob:
			c.errorf(s, fmt.Sprintf("narrow the glob: at most %d tracepoints, bpftrace's max_probes", maxTracepointGlob), "%s matches %d tracepoints", s.Text, len(names))
		default:
			for _, n := range names {
				cat, name, _ := strings.Cut(n, ":")
				out = append(out, &lang.ProbeSpec{At: s.At, Kind: s.Kind, Target: n, Category: cat, Name: name, Text: "tracepoint:" + n})
			}
			continue
		}
		if missed == nil {
			missed = map[*lang.ProbeSpec]bool{}
		}
		missed[s] = true
		out = append(out, s)
	}
	return out, missed
}

// matchTracepoints lists "CATEGORY:NAME" of the tracepoints the globs match:
// tracefs's, where the runtime gives them, else (for a * category) the raw
// tracepoints BTF describes (btf_trace_NAME).
func (c *checker) matchTracepoints(category, name string) ([]string, error) {
	if c.opts.MatchTracepoints != nil {
		return c.opts.MatchTracepoints(category, name)
	}
	spec := wholeSpec(c.opts.BTF)
	if spec == nil {
		return nil, fmt.Errorf("no tracefs and no whole BTF to list them from")
	}
	// BTF knows the raw tracepoints by name only: a category it cannot
	// check stands as *, and a name glob within one category needs tracefs.
	cat := "*"
	if category != "*" {
		return nil, fmt.Errorf("the tracepoints of a category are listed by tracefs, which the checker was not given")
	}
	var out []string
	for t, err := range spec.All() {
		if err != nil {
			return nil, err
		}
		td, ok := t.(*btf.Typedef)
		if !ok {
			continue
		}
		n, ok := strings.CutPrefix(td.Name, "btf_trace_")
		if !ok {
			continue
		}
		if m, _ := path.Match(name, n); m {
			out = append(out, cat+":"+n)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// expandRaw puts a spec for every raw tracepoint a rawtracepoint glob
// matches (rawtracepoint:sys_*: sys_enter, sys_exit), by BTF's
// btf_trace_NAME, in name order; one that matches none is an error.
func (c *checker) expandRaw(s *lang.ProbeSpec, out []*lang.ProbeSpec, missed map[*lang.ProbeSpec]bool) ([]*lang.ProbeSpec, map[*lang.ProbeSpec]bool) {
	var names []string
	if spec := wholeSpec(c.opts.BTF); spec != nil {
		for t, err := range spec.All() {
			if err != nil {
				break
			}
			td, ok := t.(*btf.Typedef)
			if !ok {
				continue
			}
			if n, ok := strings.CutPrefix(td.Name, "btf_trace_"); ok {
				if m, _ := path.Match(s.Name, n); m {
					names = append(names, n)
				}
			}
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	switch {
	case len(names) == 0:
		c.errorf(s, "raw tracepoints are named as the tracepoints are: skbtrace -l 'tracepoint:*:NAME'", "no raw tracepoint matches %s", s.Text)
	case len(names) > maxTracepointGlob:
		c.errorf(s, fmt.Sprintf("narrow the glob: at most %d tracepoints, bpftrace's max_probes", maxTracepointGlob), "%s matches %d raw tracepoints", s.Text, len(names))
	default:
		for _, n := range names {
			out = append(out, &lang.ProbeSpec{At: s.At, Kind: s.Kind, Target: n, Category: "*", Name: n, Raw: true, Text: "rawtracepoint:" + n})
		}
		return out, missed
	}
	if missed == nil {
		missed = map[*lang.ProbeSpec]bool{}
	}
	missed[s] = true
	return append(out, s), missed
}
