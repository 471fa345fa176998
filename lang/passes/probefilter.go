package passes

import (
	"regexp"
	"strings"

	"github.com/skbtrace/skbtrace/lang"
)

// ProbeFilter returns the script with only the probe specs whose name
// matches re (--probe-filter REGEX, as bpftrace's): a spec's name is its
// text as written or its full name (tracepoint:CAT:NAME for t:CAT:NAME,
// interval:ms:100); begin and end always run, as in bpftrace; a probe
// left with no spec is dropped. s is not changed.
func ProbeFilter(s *lang.Script, re *regexp.Regexp) *lang.Script {
	var probes []*lang.Probe
	for _, p := range s.Probes {
		var specs []*lang.ProbeSpec
		for _, sp := range p.Specs {
			special := sp.Kind == lang.ProbeBegin || sp.Kind == lang.ProbeEnd
			if special || re.MatchString(sp.Text) || re.MatchString(FullName(sp)) {
				specs = append(specs, sp)
			}
		}
		switch {
		case len(specs) == len(p.Specs):
			probes = append(probes, p)
		case len(specs) > 0:
			cp := *p
			cp.Specs = specs
			probes = append(probes, &cp)
		}
	}
	cp := *s
	cp.Probes = probes
	return &cp
}

// shortKinds are bpftrace's abbreviations of probe kinds.
var shortKinds = map[string]string{"t": "tracepoint", "k": "kprobe", "kr": "kretprobe", "f": "fentry", "fr": "fexit",
	"i": "interval", "p": "profile", "u": "uprobe", "ur": "uretprobe", "rawtracepoint": "rawtracepoint", "kfunc": "fentry", "kretfunc": "fexit"}

// FullName is a probe spec's name as bpftrace's full form spells it:
// begin and end in lower case, abbreviations spelled out.
func FullName(sp *lang.ProbeSpec) string {
	switch sp.Kind {
	case lang.ProbeBegin:
		return "begin"
	case lang.ProbeEnd:
		return "end"
	}
	kind, rest, ok := strings.Cut(sp.Text, ":")
	if !ok {
		return sp.Text
	}
	if full, ok := shortKinds[kind]; ok {
		kind = full
	}
	return kind + ":" + rest
}
