package k8stest

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// TestContainerdPods runs two pods in two namespaces through the CRI,
// makes them talk over UDP and TCP, and checks what the host sees of them;
// then that the cleanup leaves nothing.
func TestContainerdPods(t *testing.T) {
	needRoot(t)
	before := lockedSnapshot(t)
	t.Run("pods", func(t *testing.T) {
		start := time.Now()
		c := Containerd(t)
		t.Logf("containerd ready in %s", time.Since(start).Round(time.Millisecond))
		start = time.Now()
		server := c.RunPod(t, "ns-a", "server", "udp-serve", "9000")
		t.Logf("pod running in %s: %s", time.Since(start).Round(time.Millisecond), server)
		client := c.RunPod(t, "ns-b", "client", "tcp-serve", "9001")
		t.Logf("pod %s", client)

		if server.NetNSInode == client.NetNSInode {
			t.Errorf("both pods in netns %d", server.NetNSInode)
		}
		if host, _ := netnsInode(os.Getpid()); host == server.NetNSInode {
			t.Errorf("pod in the host's netns %d", host)
		}
		for _, p := range []*Pod{server, client} {
			if !strings.HasPrefix(p.IP, "10.244.0.") {
				t.Errorf("%s: IP not in %s", p, PodSubnet)
			}
			master, err := os.Readlink(filepath.Join("/sys/class/net", p.HostVeth, "master"))
			if err != nil || filepath.Base(master) != Bridge {
				t.Errorf("%s: host veth not on %s: %v %s", p, Bridge, err, master)
			}
			if !strings.HasPrefix(p.NetNS, c.Dir) {
				t.Errorf("%s: netns %s not under %s", p, p.NetNS, c.Dir)
			}
		}

		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		l, err := c.Runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{
			LabelSelector: map[string]string{LabelPodNamespace: "ns-a", LabelPodName: "server"}}})
		if err != nil || len(l.Items) != 1 || l.Items[0].Id != server.SandboxID || l.Items[0].Labels[LabelPodUID] != server.UID {
			t.Errorf("ListPodSandbox by kubelet's labels: %v %v", l, err)
		}

		client.Exec(t, "udp-send", net.JoinHostPort(server.IP, "9000"), "5")
		waitLog(t, server, `"podnet 4"`)
		if n := strings.Count(server.Logs(t), "udp "+client.IP+":"); n != 5 {
			t.Errorf("server got %d datagrams from %s:\n%s", n, client.IP, server.Logs(t))
		}
		server.Exec(t, "tcp-send", net.JoinHostPort(client.IP, "9001"), "3")
		waitLog(t, client, `"podnet 2"`)

		client.Stop(t)
		if _, err := os.Stat(fmt.Sprintf("/sys/class/net/%s", client.HostVeth)); err == nil {
			t.Errorf("%s still there after Stop", client.HostVeth)
		}
	})
	checkClean(t, before)
}

// waitLog waits (10 s at most) for want in the pod's log.
func waitLog(t *testing.T, p *Pod, want string) {
	t.Helper()
	err := poll("log line "+want, 10*time.Second, 20*time.Millisecond, func() (bool, error) {
		return strings.Contains(p.Logs(t), want), nil
	})
	if err != nil {
		t.Fatalf("%s: %v; log:\n%s", p, err, p.Logs(t))
	}
}

// snapshot is the host state the harness must leave as it found it.
type snapshot struct {
	links   string
	mounts  int
	sysctls string
}

// lockedSnapshot is hostSnapshot taken under the containerd lock, after
// sweeping what a test binary that died may have left.
func lockedSnapshot(t *testing.T) snapshot {
	t.Helper()
	unlock, err := lockFile(containerdLock)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	sweep(t)
	sweepCluster()
	return hostSnapshot()
}

func hostSnapshot() snapshot {
	var s snapshot
	ifs, _ := net.Interfaces()
	for _, i := range ifs {
		s.links += i.Name + " "
	}
	s.mounts = len(mountsUnder("/"))
	for _, k := range []string{"vm/overcommit_memory", "kernel/panic", "kernel/panic_on_oops"} {
		b, _ := os.ReadFile("/proc/sys/" + k)
		s.sysctls += k + "=" + strings.TrimSpace(string(b)) + " "
	}
	return s
}

// checkClean fails the test if anything of the harness stays on the host.
// It holds the containerd lock meanwhile: another test's containerd is
// not ours.
func checkClean(t *testing.T, before snapshot) {
	t.Helper()
	unlock, err := lockFile(containerdLock)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	after := hostSnapshot()
	if after.links != before.links {
		t.Errorf("interfaces before: %s\nafter: %s", before.links, after.links)
	}
	if after.mounts != before.mounts {
		t.Errorf("%d mounts before, %d after: %v", before.mounts, after.mounts, mountsUnder("/tmp"))
	}
	if after.sysctls != before.sysctls {
		t.Errorf("sysctls before: %s\nafter: %s", before.sysctls, after.sysctls)
	}
	for _, pid := range pids() {
		cl := cmdline(pid)
		switch filepath.Base(strings.Fields(cl + " x")[0]) {
		case "containerd", "containerd-shim-runc-v2", "kubelet", "kube-apiserver", "etcd", "podnet":
			t.Errorf("process left: %d %s", pid, cl)
		}
	}
	for _, root := range cgroupRoots() {
		for _, cg := range []string{cgroupParent, "/kubepods"} {
			if _, err := os.Stat(filepath.Join(root, cg)); err == nil {
				t.Errorf("cgroup left: %s", filepath.Join(root, cg))
			}
		}
	}
	for _, d := range []string{"/var/lib/kubelet", "/var/log/pods", "/var/log/containers"} {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("left: %s", d)
		}
	}
	if m, _ := filepath.Glob("/tmp/k8stest-*"); len(m) > 0 {
		t.Errorf("left: %v", m)
	}
	if m, _ := filepath.Glob("/var/lib/cni/results/" + cniNetwork + "-*"); len(m) > 0 {
		t.Errorf("left: %v", m)
	}
}
