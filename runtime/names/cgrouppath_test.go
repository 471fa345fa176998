package names

import "testing"

// TestParseCgroupPath reads the container ID, runtime and pod UID from the
// cgroup path shapes of kubelet (cgroupfs and systemd), CRI-O, podman and
// docker, and none from conmon's or a host service's.
func TestParseCgroupPath(t *testing.T) {
	const id = "871ab0bb48b59543f2dc51c3decae2ec53b4b8a3947084e9ffa54bcab8645e80"
	const uid = "0f4a4b3e-8c1d-4a55-9f7e-2b6f0c1d2e3f"
	uidUnderscore := "0f4a4b3e_8c1d_4a55_9f7e_2b6f0c1d2e3f"
	cases := []struct {
		path string
		want cgroupContainer
		ok   bool
	}{
		{"/kubepods/pod" + uid + "/" + id, cgroupContainer{id, "", uid}, true},
		{"/kubepods/burstable/pod" + uid + "/" + id, cgroupContainer{id, "", uid}, true},
		{"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + uidUnderscore + ".slice/cri-containerd-" + id + ".scope", cgroupContainer{id, "containerd", uid}, true},
		{"/kubepods.slice/kubepods-pod" + uidUnderscore + ".slice/crio-" + id + ".scope", cgroupContainer{id, "cri-o", uid}, true},
		{"/kubepods.slice/kubepods-pod" + uidUnderscore + ".slice/crio-conmon-" + id + ".scope", cgroupContainer{}, false},
		{"/system.slice/docker-" + id + ".scope", cgroupContainer{id, "docker", ""}, true},
		{"/docker/" + id, cgroupContainer{id, "docker", ""}, true},
		{"/libpod_parent/libpod-" + id, cgroupContainer{id, "podman", ""}, true},
		{"/machine.slice/libpod-" + id + ".scope/container", cgroupContainer{id, "podman", ""}, true},
		{"/machine.slice/libpod-conmon-" + id + ".scope", cgroupContainer{}, false},
		{"/default/" + id, cgroupContainer{id, "", ""}, true},
		{"/system.slice/ssh.service", cgroupContainer{}, false},
		{"/", cgroupContainer{}, false},
	}
	for _, c := range cases {
		got, ok := parseCgroupPath(c.path)
		if ok != c.ok || got != c.want {
			t.Errorf("parseCgroupPath(%q) = %+v, %v; want %+v, %v", c.path, got, ok, c.want, c.ok)
		}
	}
}

// TestParseProcCgroup takes the v2 line's path and, where it names no
// container, a v1 line's (a hybrid host).
func TestParseProcCgroup(t *testing.T) {
	const id = "871ab0bb48b59543f2dc51c3decae2ec53b4b8a3947084e9ffa54bcab8645e80"
	v2, c, ok := parseProcCgroup([]byte("4:memory:/docker/" + id + "\n1:cpu:/\n0::/\n"))
	if v2 != "/" || !ok || c.ID != id || c.Runtime != "docker" {
		t.Errorf("got %q %+v %v", v2, c, ok)
	}
}
