package names

import "strings"

// Identity is what is known of a kernel ID: the pod, the container or the
// named network namespace behind it. Fields nothing answered are "".
type Identity struct {
	// Namespace, Pod and PodUID name the Kubernetes pod, from the CRI
	// sandbox's metadata (or its io.kubernetes.pod.* labels); "" if none.
	Namespace, Pod, PodUID string
	// Container is the container's name: the Kubernetes container name for a
	// cgroup or PID lookup; for a netns lookup the pod's single container if
	// it has exactly one, else ""; or the podman or docker container's name.
	Container string
	// ContainerID is the full container ID where the lookup is of one
	// container.
	ContainerID string
	// Containers are the names of all containers sharing the network
	// namespace, sorted.
	Containers []string
	// Runtime is "containerd", "cri-o", "podman", "docker" or "".
	Runtime string
	// NetnsName is the `ip netns` name (/run/netns/NAME) where that is what
	// names the network namespace.
	NetnsName string
}

// Label is the Identity's name for a person, the best known: "default/web-0"
// for a pod, "podman:web" or "docker:web" for a container, "netns:blue" for
// an `ip netns` namespace, "" when nothing is known.
func (id Identity) Label() string {
	switch {
	case id.Pod != "" && id.Namespace != "":
		return id.Namespace + "/" + id.Pod
	case id.Pod != "":
		return id.Pod
	case id.PodUID != "":
		return "pod:" + id.PodUID
	}
	rt := id.Runtime
	if rt == "" {
		rt = "container"
	}
	switch {
	case id.Container != "":
		return rt + ":" + id.Container
	case len(id.Containers) > 0:
		return rt + ":" + strings.Join(id.Containers, ",")
	case id.ContainerID != "":
		return rt + ":" + shortID(id.ContainerID)
	case id.NetnsName != "":
		return "netns:" + id.NetnsName
	}
	return ""
}

// shortID is a container ID as runtimes print it: its first 12 characters.
func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// equal reports whether two identities are the same, Containers included.
func (id Identity) equal(o Identity) bool {
	if id.Namespace != o.Namespace || id.Pod != o.Pod || id.PodUID != o.PodUID ||
		id.Container != o.Container || id.ContainerID != o.ContainerID ||
		id.Runtime != o.Runtime || id.NetnsName != o.NetnsName ||
		len(id.Containers) != len(o.Containers) {
		return false
	}
	for i := range id.Containers {
		if id.Containers[i] != o.Containers[i] {
			return false
		}
	}
	return true
}
