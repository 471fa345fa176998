package check

import (
	"slices"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/passes"
)

// Prune returns the script as this kernel runs it, by what info (s's, from
// Check) recorded: without the specs missing_probes drops
// (passes.DropSpecs), with has()'s decisions applied (passes.PruneHas),
// and ending once its begin probes ran where it has no other probe
// (passes.ExitAfterBegin).
// s is not changed. Where nothing is pruned it returns s and info as they
// are; otherwise the pruned copy is checked again with opts, since the
// code generator reads the Info by node and the probes that changed are
// new nodes, and its Info is returned, with info's notes (those of what
// was dropped among them).
func Prune(s *lang.Script, info *Info, opts Options) (*lang.Script, *Info, error) {
	pruned := passes.ExitAfterBegin(passes.PruneHas(passes.DropSpecs(s, info.Missing), info.Has))
	if pruned == s {
		return s, info, nil
	}
	again, err := Check(pruned, opts)
	if err != nil {
		return nil, nil, err
	}
	notes := slices.Clone(info.Notes)
	for _, n := range again.Notes {
		if !slices.Contains(notes, n) {
			notes = append(notes, n)
		}
	}
	again.Notes = notes
	return pruned, again, nil
}
