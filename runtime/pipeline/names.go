package pipeline

import (
	"net/netip"
	"strings"

	"github.com/skbtrace/skbtrace/runtime/names"
	"github.com/skbtrace/skbtrace/runtime/output"
	"github.com/skbtrace/skbtrace/runtime/session"
)

// Names is what the formats print of a resolver's identities
// (output.Names): a pod's namespace, name and containers, a container's
// name, an ip netns name, and the label in parentheses.
func Names(r *names.Resolver) output.Names { return resolverNames{r} }

type resolverNames struct{ r *names.Resolver }

func name(id names.Identity, ok bool) (output.Name, bool) {
	if !ok {
		return output.Name{}, false
	}
	n := output.Name{Namespace: id.Namespace, Pod: id.Pod, Container: id.Container, Label: id.Label()}
	if n.Container == "" {
		n.Container = strings.Join(id.Containers, ",")
	}
	return n, n.Label != ""
}

func (n resolverNames) Netns(inode uint64) (output.Name, bool) { return name(n.r.Netns(inode)) }

// Pid names a process by its container alone: a host process in an ip
// netns says nothing more than its pid.
func (n resolverNames) Pid(pid uint32) (output.Name, bool) {
	id, ok := n.r.Pid(pid)
	if id.Pod == "" && id.Container == "" && id.ContainerID == "" {
		return output.Name{}, false
	}
	return name(id, ok)
}

// Dev names a host-side veth by the pod or container behind it.
func (n resolverNames) Dev(dev string) (output.Name, bool) {
	id, ok := n.r.Dev(dev)
	if id.Pod == "" && id.Container == "" && len(id.Containers) == 0 {
		return output.Name{}, false
	}
	return name(id, ok)
}

func (n resolverNames) Addr(a netip.Addr) (output.Name, bool) { return name(n.r.Addr(a)) }

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
