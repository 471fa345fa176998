// Package names resolves the kernel's IDs (a network namespace's inode, a
// cgroup v2 ID, a PID, a host-side device) to the names a cluster user
// knows: the Kubernetes pod and container, the podman or docker container,
// the `ip netns` name. Output formatters, Prometheus metrics and the pod
// filters share one Resolver.
//
// Lookups are made on the event-printing path, so each is a map read from an
// immutable snapshot behind an atomic pointer, never I/O. An unknown ID
// answers !ok at once and nudges (without blocking, at most every 250 ms) the
// background refresher, so its name appears once a source knows it.
//
// The sources, each in a file of its own: the CRI (cri.go: pod sandboxes,
// their network namespaces and containers), /proc (proc.go: every process's
// network namespace and cgroup, the container ID read from the cgroup path's
// shape in cgrouppath.go, its cgroup v2 directory's ID in cgroupfs.go; a
// refresh lists /proc and reads only the processes new since the last, and
// each known one again at most every procRecheck refreshes), podman's and
// docker's stores (engines.go: container names where no Kubernetes runs),
// `ip netns` names (ipnetns.go) and host-side veths (veth.go: a device to
// the namespace of its peer). tables.go joins what they found into the
// snapshot.
package names
