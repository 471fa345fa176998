package pipeline

import (
	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/runtime/session"
)

// Probes counts the probes the script asked for, not track()'s helpers:
// before attaching (st nil), what the globs matched; after, with st the
// session's FuncStats, the skb: functions that attached, not those tried.
func (p *Plan) Probes(st *session.AttachStats) int {
	n := 0
	for _, p := range p.Output.Programs {
		// A merged program runs several probes: each counts.
		if p.Helper == "" && !p.KprobeForm() && p.Function == "" && len(p.Functions) == 0 {
			n += p.Probes()
		}
		if st == nil && p.Helper == "" && p.Spec != nil && p.Spec.Spec.Kind != lang.ProbeSkb {
			// A glob's functions, before they attach: what it matched.
			n += len(p.Functions) * p.Probes()
			if p.Function != "" {
				n += p.Probes()
			}
		}
	}
	if st != nil {
		// skb: programs on functions: what attached, not what was tried.
		n += st.Attached
	}
	return n
}
