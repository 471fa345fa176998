package pipeline

import (
	"github.com/cilium/ebpf"

	"github.com/skbtrace/skbtrace/runtime/session"
)

// LoadCollection loads the compiled programs and their maps, attaching
// nothing: --test and --bench run test: and bench: programs from it. The
// caller closes it.
func (p *Plan) LoadCollection() (*ebpf.Collection, error) {
	return session.LoadWith(p.Output, p.cfg.Verbose, p.types.typeIDs())
}
