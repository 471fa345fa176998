package passes

import "github.com/skbtrace/skbtrace/lang"

// DropSpecs returns the script without the probe specs drop holds (those
// missing_probes drops: check.Info.Missing); a probe left with none is
// dropped whole. s is not changed; where nothing is dropped, DropSpecs
// returns s.
func DropSpecs(s *lang.Script, drop map[*lang.ProbeSpec]bool) *lang.Script {
	if len(drop) == 0 {
		return s
	}
	probes := make([]*lang.Probe, 0, len(s.Probes))
	changed := false
	for _, p := range s.Probes {
		var specs []*lang.ProbeSpec
		for _, sp := range p.Specs {
			if !drop[sp] {
				specs = append(specs, sp)
			}
		}
		switch {
		case len(specs) == len(p.Specs):
			probes = append(probes, p)
			continue
		case len(specs) > 0:
			cp := *p
			cp.Specs = specs
			probes = append(probes, &cp)
		}
		changed = true
	}
	if !changed {
		return s
	}
	cp := *s
	cp.Probes = probes
	return &cp
}
