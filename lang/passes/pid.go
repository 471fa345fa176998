package passes

import "github.com/skbtrace/skbtrace/lang"

// Pid returns the script with `pid == PID` ANDed in front of the predicate
// of every probe that runs in a process's context (-p PID, bpftrace's
// process filter): all but begin, end and interval, which run in no
// traced process. The new nodes take the probe's position; s is not
// changed.
func Pid(s *lang.Script, pid uint64) *lang.Script {
	out, _ := eachProbe(s, func(p *lang.Probe) *lang.Probe {
		for _, sp := range p.Specs {
			switch sp.Kind {
			case lang.ProbeBegin, lang.ProbeEnd, lang.ProbeInterval:
				return p
			}
		}
		at := p.At
		return andPred(p, &lang.BinaryExpr{At: at, Op: "==", OpSpan: at,
			X: &lang.Ident{At: at, Name: "pid"}, Y: &lang.IntLit{At: at, Value: pid}})
	})
	return out
}
