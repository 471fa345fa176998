package passes

import "github.com/skbtrace/skbtrace/lang"

// eachProbe returns s with each probe replaced by what f makes of it (f
// returns the probe itself to leave it), and whether f changed any; s
// itself where none.
func eachProbe(s *lang.Script, f func(*lang.Probe) *lang.Probe) (*lang.Script, bool) {
	var probes []*lang.Probe // nil until a probe changes
	for i, p := range s.Probes {
		q := f(p)
		if q != p && probes == nil {
			probes = append(make([]*lang.Probe, 0, len(s.Probes)), s.Probes[:i]...)
		}
		if probes != nil {
			probes = append(probes, q)
		}
	}
	if probes == nil {
		return s, false
	}
	cp := *s
	cp.Probes = probes
	return &cp, true
}
