package output

import (
	"net/netip"
	"strings"
	"sync"

	"github.com/skbtrace/skbtrace/runtime/names"
)

// ResolverNames is the Names of a runtime/names Resolver: what the formats
// print of its identities (a pod's namespace, name and containers, a
// container's name, an ip netns name, and the label in parentheses). The
// names made of each identity are kept until the resolver's tables change,
// so that a printed event pays a map read, not a label's making.
func ResolverNames(r *names.Resolver) Names {
	n := &resolverNames{r: r, netns: map[uint64]Name{}, pid: map[uint32]Name{}, dev: map[string]Name{}, addr: map[netip.Addr]Name{}}
	r.OnChange(n.clear)
	return n
}

type resolverNames struct {
	r     *names.Resolver
	mu    sync.RWMutex
	netns map[uint64]Name
	pid   map[uint32]Name
	dev   map[string]Name
	addr  map[netip.Addr]Name
}

// clear forgets the names made: the resolver's tables changed.
func (n *resolverNames) clear() {
	n.mu.Lock()
	clear(n.netns)
	clear(n.pid)
	clear(n.dev)
	clear(n.addr)
	n.mu.Unlock()
}

// cached answers from m, or makes the name of what lookup finds and keeps
// it; what is not known is asked again next time (the resolver's miss
// nudges its refresh).
func cached[K comparable](n *resolverNames, m map[K]Name, k K, lookup func() (Name, bool)) (Name, bool) {
	n.mu.RLock()
	v, ok := m[k]
	n.mu.RUnlock()
	if ok {
		return v, true
	}
	v, ok = lookup()
	if ok {
		n.mu.Lock()
		m[k] = v
		n.mu.Unlock()
	}
	return v, ok
}

func identityName(id names.Identity, ok bool) (Name, bool) {
	if !ok {
		return Name{}, false
	}
	n := Name{Namespace: id.Namespace, Pod: id.Pod, Container: id.Container, Label: id.Label()}
	if n.Container == "" {
		n.Container = strings.Join(id.Containers, ",")
	}
	return n, n.Label != ""
}

func (n *resolverNames) Netns(inode uint64) (Name, bool) {
	return cached(n, n.netns, inode, func() (Name, bool) { return identityName(n.r.Netns(inode)) })
}

// Pid names a process by its container alone: a host process in an ip
// netns says nothing more than its pid.
func (n *resolverNames) Pid(pid uint32) (Name, bool) {
	return cached(n, n.pid, pid, func() (Name, bool) {
		id, ok := n.r.Pid(pid)
		if id.Pod == "" && id.Container == "" && id.ContainerID == "" {
			return Name{}, false
		}
		return identityName(id, ok)
	})
}

// Dev names a host-side veth by the pod or container behind it.
func (n *resolverNames) Dev(dev string) (Name, bool) {
	return cached(n, n.dev, dev, func() (Name, bool) {
		id, ok := n.r.Dev(dev)
		if id.Pod == "" && id.Container == "" && len(id.Containers) == 0 {
			return Name{}, false
		}
		return identityName(id, ok)
	})
}

func (n *resolverNames) Addr(a netip.Addr) (Name, bool) {
	return cached(n, n.addr, a, func() (Name, bool) { return identityName(n.r.Addr(a)) })
}
