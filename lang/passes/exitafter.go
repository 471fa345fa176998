package passes

import "github.com/skbtrace/skbtrace/lang"

// ExitAfterBegin returns the script with a last `begin { exit() }` where
// every probe of it is begin or end: bpftrace exits once its begin probes
// have run when nothing else could fire, running the end probes and
// printing the maps as on any exit. s is not changed; a script with
// another probe, or none, is returned as it is.
func ExitAfterBegin(s *lang.Script) *lang.Script {
	if len(s.Probes) == 0 {
		return s
	}
	for _, p := range s.Probes {
		for _, sp := range p.Specs {
			if sp.Kind != lang.ProbeBegin && sp.Kind != lang.ProbeEnd {
				return s
			}
		}
	}
	// The added probe sits at the script's end, zero-width, so that
	// nothing in the script points at it.
	at := lang.Span{Start: s.At.End, End: s.At.End}
	exit := &lang.ExprStmt{At: at, X: &lang.CallExpr{At: at, Name: "exit", NameSpan: at}}
	probe := &lang.Probe{At: at, Implicit: true,
		Specs: []*lang.ProbeSpec{{At: at, Kind: lang.ProbeBegin, Text: "begin"}},
		Body:  &lang.Block{At: at, Stmts: []lang.Stmt{exit}}}
	cp := *s
	cp.Probes = append(append(make([]*lang.Probe, 0, len(s.Probes)+1), s.Probes...), probe)
	return &cp
}
