package pipeline

import (
	"github.com/skbtrace/skbtrace/runtime/names"
	"github.com/skbtrace/skbtrace/runtime/session"
)

// Scope is what a selector of the pod filters lets through, for the
// session to keep its map current.
func Scope(r *names.Resolver, sel names.Selector) *session.Scope {
	return &session.Scope{
		Match: func() map[uint64]string {
			m := r.Match(sel)
			out := make(map[uint64]string, len(m))
			for ino, id := range m {
				out[ino] = id.Label()
			}
			return out
		},
		OnChange: r.OnChange,
	}
}
