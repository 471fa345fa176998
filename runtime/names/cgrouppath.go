package names

import "strings"

// cgroupContainer is what a cgroup path's shape says of the process in it.
type cgroupContainer struct {
	ID      string // the full container (or pod sandbox) ID, "" if none
	Runtime string // "containerd", "cri-o", "podman", "docker" or "" where the shape does not say
	PodUID  string // the Kubernetes pod's UID, with "-" (systemd slices spell it with "_")
}

// scopePrefixes are the prefixes runtimes give a container's cgroup
// directory (systemd scopes and podman's cgroupfs directories), longest
// first, with the runtime each means.
var scopePrefixes = []struct{ prefix, runtime string }{
	{"cri-containerd-", "containerd"},
	{"crio-", "cri-o"},
	{"libpod-", "podman"},
	{"docker-", "docker"},
}

// parseCgroupPath reads the container ID, runtime and pod UID from a cgroup
// path as /proc/PID/cgroup shows it:
//
//	/kubepods/burstable/pod<UID>/<id>                                  (kubelet, cgroupfs)
//	/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod<U_I_D>.slice/cri-containerd-<id>.scope
//	.../crio-<id>.scope, .../docker-<id>.scope                          (CRI-O, Docker under systemd)
//	/machine.slice/libpod-<id>.scope/container, /libpod_parent/libpod-<id> (podman)
//	/docker/<id>                                                       (Docker, cgroupfs)
//
// Conmon's cgroups (libpod-conmon-<id>, crio-conmon-<id>) are not the
// container's. ok is false where no component holds a container ID.
func parseCgroupPath(p string) (c cgroupContainer, ok bool) {
	parts := strings.Split(strings.Trim(p, "/"), "/")
	for _, part := range parts {
		if uid := podUIDOf(part); uid != "" {
			c.PodUID = uid
		}
	}
	for i := len(parts) - 1; i >= 0; i-- {
		part := strings.TrimSuffix(parts[i], ".scope")
		if strings.Contains(part, "-conmon-") {
			return cgroupContainer{}, false
		}
		rt := ""
		for _, sp := range scopePrefixes {
			if strings.HasPrefix(part, sp.prefix) {
				part, rt = part[len(sp.prefix):], sp.runtime
				break
			}
		}
		if !isContainerID(part) {
			continue
		}
		if rt == "" && i > 0 {
			switch parts[i-1] {
			case "docker":
				rt = "docker"
			case "libpod_parent":
				rt = "podman"
			}
		}
		c.ID, c.Runtime = part, rt
		return c, true
	}
	return cgroupContainer{}, false
}

// isContainerID reports whether s is a 64-digit lower-case hex ID, as
// containerd, CRI-O, podman and docker make them.
func isContainerID(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !(s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
			return false
		}
	}
	return true
}

// podUIDOf returns the pod UID a cgroup path component names: "pod<UID>"
// (cgroupfs) or "kubepods-<qos>-pod<U_I_D>.slice" (systemd, "_" for "-").
func podUIDOf(part string) string {
	part = strings.TrimSuffix(part, ".slice")
	i := strings.LastIndex(part, "pod")
	if i < 0 || (i > 0 && part[i-1] != '-') {
		return ""
	}
	uid := strings.ReplaceAll(part[i+3:], "_", "-")
	if !isUID(uid) {
		return ""
	}
	return uid
}

// isUID reports whether s has a UUID's shape: 8-4-4-4-12 hex digits.
func isUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch i {
		case 8, 13, 18, 23:
			if s[i] != '-' {
				return false
			}
		default:
			c := s[i]
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
	}
	return true
}
