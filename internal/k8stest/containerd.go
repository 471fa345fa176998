package k8stest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The pod network every containerd here configures.
const (
	// Bridge is the CNI bridge the pods' host-side veths are attached to.
	Bridge = "skbtcni0"
	// PodSubnet is the pods' IPv4 range; the bridge is its first address.
	PodSubnet = "10.244.0.0/24"
	// BridgeIP is the bridge's address, the pods' gateway.
	BridgeIP = "10.244.0.1"
	// cniNetwork names the network in the conflist and in /var/lib/cni.
	cniNetwork = "skbtrace-k8stest"
	// cgroupParent holds the cgroups of the pods RunPod makes.
	cgroupParent = "/skbtrace-k8stest"
)

// CRI is a running containerd with its CRI plugin, as Containerd starts it.
type CRI struct {
	Socket  string                          // containerd's gRPC socket (unix path)
	Dir     string                          // root, state, config and logs live here
	Runtime runtimeapi.RuntimeServiceClient // CRI runtime service on Socket
	Images  runtimeapi.ImageServiceClient   // CRI image service on Socket
	Set     *ImageSet                       // the pause and podnet images, imported
	proc    *component                      // containerd itself
	conn    *grpc.ClientConn                // Runtime's and Images' connection
	mu      sync.Mutex                      // guards pids
	pids    map[int]string                  // processes of our pods, by start time
	created []string                        // host directories that were absent before
	after   func() error                    // the last step of cleanup (Cluster's)
}

const containerdConfig = `version = 2
root = "{{dir}}/root"
state = "{{dir}}/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = "{{dir}}/containerd.sock"

[ttrpc]
  address = "{{dir}}/containerd.sock.ttrpc"

[plugins."io.containerd.internal.v1.opt"]
  path = "{{dir}}/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "{{pause}}"
  restrict_oom_score_adj = true
  disable_apparmor = true
  netns_mounts_under_state_dir = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "{{dir}}/cni"
    max_conf_num = 1
`

const cniConflist = `{
  "cniVersion": "0.4.0",
  "name": "` + cniNetwork + `",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "` + Bridge + `",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "{{dir}}/ipam",
        "ranges": [[{"subnet": "` + PodSubnet + `", "gateway": "` + BridgeIP + `"}]]
      }
    }
  ]
}
`

// hostDirs are the directories containerd, runc and CNI create outside
// the temporary directory; those that were absent are removed, if empty,
// at cleanup.
var hostDirs = []string{"/run/containerd/runc/k8s.io", "/run/containerd/runc", "/run/containerd/s", "/run/containerd", "/var/lib/cni/results", "/var/lib/cni"}

// Containerd starts Debian's containerd with the CRI plugin, its root,
// state and socket in a temporary directory, pods on the bridge Bridge
// (PodSubnet, no masquerade), runc without systemd cgroups. It imports the
// Images and waits until the CRI reports the runtime and network ready
// (at most a minute). At cleanup it removes every pod sandbox, stops
// containerd, kills what stays (shims, pod processes), unmounts the
// network namespaces and snapshots, deletes the bridge and the pods' CNI
// state. It holds /tmp/skbtrace-containerd.lock meanwhile: one containerd
// at a time on a machine.
func Containerd(t testing.TB) *CRI {
	t.Helper()
	return startContainerd(t, nil, nil)
}

// startContainerd is Containerd; after, if not nil, runs at the end of its
// cleanup, while the lock is still held, and before it, once the lock is
// taken, sweep and the caller's sweep.
func startContainerd(t testing.TB, sweepMore, after func() error) *CRI {
	t.Helper()
	needRoot(t)
	needTools(t, "containerd", "containerd-shim-runc-v2", "runc", "ctr", "ip", "nsenter", "podman")
	for _, p := range []string{"/usr/lib/cni/bridge", "/usr/lib/cni/host-local", "/usr/lib/cni/loopback"} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("k8stest: no %s (apt-get install containernetworking-plugins)", p)
		}
	}
	set := Images(t)
	flock(t, containerdLock)
	sweep(t)
	if sweepMore != nil {
		if err := sweepMore(); err != nil {
			t.Fatalf("k8stest: leftovers of an earlier run: %v", err)
		}
	}

	dir := tempDir(t, "k8stest-ctrd-")
	c := &CRI{Socket: filepath.Join(dir, "containerd.sock"), Dir: dir, Set: set, pids: map[int]string{}, created: missing(hostDirs...), after: after}
	expand := strings.NewReplacer("{{dir}}", dir, "{{pause}}", set.Pause).Replace
	for name, text := range map[string]string{"config.toml": containerdConfig, "cni/10-skbtrace.conflist": cniConflist} {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(expand(text)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c.proc = startComponent(t, "containerd", filepath.Join(dir, "containerd.log"),
		"containerd", "--config", filepath.Join(dir, "config.toml"), "--log-level", "info")
	t.Cleanup(func() { c.cleanup(t) })

	conn, err := grpc.NewClient("unix://"+c.Socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		c.proc.failf(t, "gRPC client: %v", err)
	}
	c.conn = conn
	c.Runtime = runtimeapi.NewRuntimeServiceClient(conn)
	c.Images = runtimeapi.NewImageServiceClient(conn)
	err = poll("CRI runtime and network ready", time.Minute, 50*time.Millisecond, func() (bool, error) {
		if c.proc.exited() {
			return true, fmt.Errorf("containerd exited")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		st, err := c.Runtime.Status(ctx, &runtimeapi.StatusRequest{})
		if err != nil {
			return false, err
		}
		for _, cond := range st.Status.GetConditions() {
			if !cond.Status {
				return false, fmt.Errorf("%s: %s %s", cond.Type, cond.Reason, cond.Message)
			}
		}
		return true, nil
	})
	if err != nil {
		c.proc.failf(t, "%v", err)
	}
	c.ImportImage(t, set.Pause, set.PauseTar)
	c.ImportImage(t, set.Podnet, set.PodnetTar)
	return c
}

// cleanup tears down what Containerd and the pods made; see Containerd.
func (c *CRI) cleanup(t testing.TB) {
	var problems []string
	if c.conn != nil && !c.proc.exited() {
		c.removeAll()
	}
	if c.conn != nil {
		c.conn.Close()
	}
	c.proc.stop(syscall.SIGTERM, 5*time.Second)
	if left := killMatching("containerd-shim", c.Socket); len(left) > 0 {
		problems = append(problems, "shims stay: "+strings.Join(left, ", "))
	}
	c.killPods()
	if err := unmountUnder(c.Dir); err != nil {
		problems = append(problems, err.Error())
	}
	if err := deleteLink(Bridge); err != nil {
		problems = append(problems, err.Error())
	}
	if err := removeCgroup(cgroupParent); err != nil {
		problems = append(problems, err.Error())
	}
	removeCNIState()
	rmdirIfEmpty(c.created...)
	if err := os.RemoveAll(c.Dir); err != nil {
		problems = append(problems, err.Error())
	}
	if c.after != nil {
		if err := c.after(); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if len(problems) > 0 {
		t.Errorf("k8stest: containerd cleanup: %s", strings.Join(problems, "; "))
	}
}

// removeAll stops and removes every pod sandbox (and so its containers)
// through the CRI, noting their processes first for killPods.
func (c *CRI) removeAll() {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pods, err := c.Runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return
	}
	ctrs, _ := c.Runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{})
	for _, ctr := range ctrs.GetContainers() {
		if st, err := c.Runtime.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: ctr.Id, Verbose: true}); err == nil {
			c.notePID(infoPID(st.Info))
		}
	}
	for _, p := range pods.Items {
		if st, err := c.Runtime.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: p.Id, Verbose: true}); err == nil {
			c.notePID(infoPID(st.Info))
		}
	}
	for _, ctr := range ctrs.GetContainers() {
		c.Runtime.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: ctr.Id, Timeout: 0})
	}
	for _, p := range pods.Items {
		c.Runtime.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: p.Id})
		c.Runtime.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: p.Id})
	}
}

// notePID remembers a pod process, with its start time, for killPods.
func (c *CRI) notePID(pid int) {
	if pid <= 0 {
		return
	}
	c.mu.Lock()
	c.pids[pid] = procStart(pid)
	c.mu.Unlock()
}

// killPods kills the pod processes that outlived their shims.
func (c *CRI) killPods() {
	c.mu.Lock()
	defer c.mu.Unlock()
	var victims []int
	for pid, start := range c.pids {
		if start != "" && procStart(pid) == start {
			syscall.Kill(pid, syscall.SIGKILL)
			victims = append(victims, pid)
		}
	}
	waitGone(victims)
}

// removeCNIState deletes this network's entries in libcni's cache
// (/var/lib/cni/results), which cannot be moved.
func removeCNIState() {
	for _, d := range []string{"/var/lib/cni/results", "/var/lib/cni/cache/results"} {
		matches, _ := filepath.Glob(filepath.Join(d, cniNetwork+"-*"))
		for _, m := range matches {
			os.Remove(m)
		}
	}
}

// sweep removes what an earlier test binary that died without its
// cleanup left: shims of its containerd, pod processes and cgroups,
// mounts under its temporary directories, the bridge.
func sweep(t testing.TB) {
	t.Helper()
	killMatching("containerd-shim", "-address /tmp/k8stest-ctrd-")
	removeCgroup(cgroupParent)
	stale, _ := filepath.Glob("/tmp/k8stest-ctrd-*")
	for _, d := range stale {
		unmountUnder(d)
		os.RemoveAll(d)
	}
	deleteLink(Bridge)
	removeCNIState()
	rmdirIfEmpty(hostDirs...)
}
