package names

import (
	"net/netip"
	"path/filepath"
	"sort"
	"strconv"
)

// tables is one immutable snapshot of what the sources found: lookups read
// it through an atomic pointer and never change it.
type tables struct {
	netns      map[uint64]Identity
	cgroup     map[uint64]Identity
	pid        map[uint32]Identity
	dev        map[string]Identity
	addr       map[netip.Addr]Identity // pod IPs (the CRI's)
	netnsNames map[string]uint64       // `ip netns` name → inode
	self       uint64                  // the resolver's own network namespace
}

// found is what one refresh's sources answered, for build to join.
type found struct {
	proc       procScan
	pods       []criPod
	criRuntime string
	engines    *engineNames
	ipnetns    map[string]uint64
	netnsDir   string
}

// build joins the sources into tables: each container ID to its identity
// (the CRI's pod and container names first, then podman's and docker's
// names, then what the cgroup path alone says); processes and their cgroups
// to their container's identity; each network namespace to its pod (CRI) or
// to the containers whose processes are in it, and to its `ip netns` name.
// The resolver's own namespace is given no container: host-network
// containers share it. It returns too a path that opens each namespace
// named, for the veths' lookup.
func build(f found) (*tables, map[uint64]string) {
	t := &tables{
		netns:      map[uint64]Identity{},
		cgroup:     map[uint64]Identity{},
		pid:        map[uint32]Identity{},
		dev:        map[string]Identity{},
		addr:       map[netip.Addr]Identity{},
		netnsNames: f.ipnetns,
		self:       f.proc.self,
	}
	paths := map[uint64]string{}

	byID := map[string]Identity{}
	podNetns := map[uint64]bool{}
	for _, p := range f.pods {
		pod := Identity{Namespace: p.Namespace, Pod: p.Name, PodUID: p.UID, Runtime: f.criRuntime}
		sandbox := pod
		sandbox.ContainerID = p.ID
		byID[p.ID] = sandbox
		var names []string
		for _, c := range p.Containers {
			id := pod
			id.Container, id.ContainerID = c.Name, c.ID
			byID[c.ID] = id
			names = appendName(names, c.Name)
		}
		if p.Netns == 0 || p.Netns == t.self {
			continue
		}
		n := pod
		n.Containers = names
		if len(names) == 1 {
			n.Container = names[0]
		}
		t.netns[p.Netns] = n
		for _, a := range p.IPs {
			t.addr[a] = n
		}
		podNetns[p.Netns] = true
		paths[p.Netns] = p.NetnsPath
	}

	identityOf := func(c cgroupContainer) Identity {
		if id, ok := byID[c.ID]; ok {
			if id.Runtime == "" {
				id.Runtime = c.Runtime
			}
			return id
		}
		id := Identity{PodUID: c.PodUID, ContainerID: c.ID, Runtime: c.Runtime}
		if f.engines != nil {
			if name, rt, ok := f.engines.name(c.ID); ok {
				id.Container, id.Runtime = name, rt
			}
		}
		return id
	}

	// Processes: pid and cgroup tables, and the containers in each namespace.
	inNetns := map[uint64]map[string]Identity{}
	for _, p := range f.proc.procs {
		if p.netns != 0 && p.netns != t.self && paths[p.netns] == "" {
			paths[p.netns] = filepath.Join("/proc", strconv.FormatUint(uint64(p.pid), 10), "ns/net")
		}
		if !p.hasCont {
			continue
		}
		id := identityOf(p.cont)
		t.pid[p.pid] = id
		if p.cgroupID != 0 {
			t.cgroup[p.cgroupID] = id
		}
		if p.netns == 0 || p.netns == t.self || podNetns[p.netns] {
			continue
		}
		if inNetns[p.netns] == nil {
			inNetns[p.netns] = map[string]Identity{}
		}
		inNetns[p.netns][p.cont.ID] = id
	}
	for ino, conts := range inNetns {
		t.netns[ino] = sharedIdentity(conts)
	}

	for name, ino := range f.ipnetns {
		id := t.netns[ino]
		if id.NetnsName == "" || name < id.NetnsName {
			id.NetnsName = name
		}
		t.netns[ino] = id
		paths[ino] = filepath.Join(f.netnsDir, name)
	}
	return t, paths
}

// sharedIdentity is a network namespace's identity from the containers
// whose processes are in it: their names, and the runtime, pod UID and
// container where all agree or there is one.
func sharedIdentity(conts map[string]Identity) Identity {
	var n Identity
	first := true
	for _, c := range conts {
		n.Containers = appendName(n.Containers, c.Container)
		if first {
			n.Runtime, n.PodUID, n.Namespace, n.Pod = c.Runtime, c.PodUID, c.Namespace, c.Pod
			first = false
			continue
		}
		if n.Runtime != c.Runtime {
			n.Runtime = ""
		}
		if n.PodUID != c.PodUID {
			n.PodUID, n.Namespace, n.Pod = "", "", ""
		}
	}
	if len(conts) == 1 {
		for cid, c := range conts {
			n.ContainerID, n.Container = cid, c.Container
		}
	}
	return n
}

// appendName adds a name to a sorted list of distinct names.
func appendName(names []string, name string) []string {
	if name == "" {
		return names
	}
	i := sort.SearchStrings(names, name)
	if i < len(names) && names[i] == name {
		return names
	}
	names = append(names, "")
	copy(names[i+1:], names[i:])
	names[i] = name
	return names
}

// equal reports whether two snapshots hold the same names.
func (t *tables) equal(o *tables) bool {
	if t == nil || o == nil {
		return t == o
	}
	return t.self == o.self &&
		sameMap(t.netns, o.netns) && sameMap(t.cgroup, o.cgroup) &&
		sameMap(t.pid, o.pid) && sameMap(t.dev, o.dev) && sameMap(t.addr, o.addr) && sameInodes(t.netnsNames, o.netnsNames)
}

// sameMap reports whether two identity tables are equal.
func sameMap[K comparable](a, b map[K]Identity) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || !v.equal(w) {
			return false
		}
	}
	return true
}

// sameInodes reports whether two name → inode tables are equal.
func sameInodes(a, b map[string]uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || v != w {
			return false
		}
	}
	return true
}
