package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skbtrace/skbtrace/internal/k8stest"
	"github.com/skbtrace/skbtrace/internal/syncbuf"
)

// pmContainer is a podman container as the host sees it: its main
// process, its address on podman's bridge, its network namespace's inode
// and the host side of its eth0.
type pmContainer struct {
	Name  string
	PID   int
	IP    string
	Netns uint64
	Veth  string
}

// podmanArgs are what podman needs on this machine: runc (crun is not
// installed everywhere) and explicit limits (the defaults exceed what the
// sandbox grants).
var podmanArgs = []string{"--runtime", "runc"}

// podmanRunFlags are the run flags of every container here.
var podmanRunFlags = []string{"--ulimit", "nofile=1024:1024", "--ulimit", "nproc=4096:4096", "--network", "bridge"}

// podman runs podman with args, bounded by a minute, and returns its
// output or fails the test.
func podman(t *testing.T, args ...string) string {
	t.Helper()
	out, err := podmanErr(args...)
	if err != nil {
		t.Fatalf("podman %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func podmanErr(args ...string) (string, error) {
	cmd := exec.Command("podman", append(append([]string{}, podmanArgs...), args...)...)
	done := make(chan struct{})
	defer close(done)
	timer := time.AfterFunc(time.Minute, func() {
		select {
		case <-done:
		default:
			if cmd.Process != nil {
				cmd.Process.Kill()
			}
		}
	})
	defer timer.Stop()
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// podnetImage makes the podnet image of internal/k8stest (built with
// podman, saved, and removed from podman's store) known to podman again,
// and returns its reference. The image is left loaded: it is a cached
// test image that other tests may be using at the same time.
func podnetImage(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("podman containers need root")
	}
	for _, tool := range []string{"podman", "runc", "nsenter", "ip"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: no podman container to trace", tool)
		}
	}
	set := k8stest.Images(t)
	if _, err := podmanErr("image", "exists", set.Podnet); err != nil {
		podman(t, "load", "-q", "-i", set.PodnetTar)
	}
	return set.Podnet
}

// runPodnet starts a container of the podnet image on podman's bridge
// network, running podnet with args, and returns what the host sees of
// it; the container is removed when the test ends.
func runPodnet(t *testing.T, image, name string, args ...string) *pmContainer {
	t.Helper()
	podmanErr("rm", "-f", "-t", "0", name)
	t.Cleanup(func() { podmanErr("rm", "-f", "-t", "0", name) })
	run := append(append(append([]string{"run", "-d"}, podmanRunFlags...), "--name", name, image), args...)
	podman(t, run...)
	return inspectPodnet(t, name)
}

// inspectPodnet reads a running container's facts without skbtrace's
// resolver: podman's inspect, /proc, and ip inside the namespace.
func inspectPodnet(t *testing.T, name string) *pmContainer {
	t.Helper()
	f := strings.Fields(podman(t, "inspect", "-f", "{{.State.Pid}} {{.NetworkSettings.IPAddress}}", name))
	if len(f) != 2 {
		t.Fatalf("podman inspect %s: %q", name, f)
	}
	c := &pmContainer{Name: name, IP: f[1]}
	var err error
	if c.PID, err = strconv.Atoi(f[0]); err != nil || c.PID <= 0 {
		t.Fatalf("podman inspect %s: pid %q", name, f[0])
	}
	if net.ParseIP(c.IP) == nil {
		t.Fatalf("podman inspect %s: address %q", name, c.IP)
	}
	c.Netns = nsInode(t, fmt.Sprintf("/proc/%d/ns/net", c.PID))
	// sysfs shows the mounter's namespace: ask ip inside, "2: eth0@if8: ...".
	out, err := exec.Command("nsenter", "-t", strconv.Itoa(c.PID), "-n", "ip", "-o", "link", "show", "eth0").Output()
	if err != nil {
		t.Fatalf("%s: reading eth0's peer: %v", name, err)
	}
	_, after, _ := strings.Cut(string(out), "eth0@if")
	idx, _ := strconv.Atoi(strings.SplitN(after, ":", 2)[0])
	ifc, err := net.InterfaceByIndex(idx)
	if err != nil {
		t.Fatalf("%s: the host-side veth (ifindex %d): %v", name, idx, err)
	}
	c.Veth = ifc.Name
	return c
}

// nsInode is the inode of a namespace file.
func nsInode(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// execSend is a -c command that has container c send n datagrams to
// addr (podnet udp-send: 10 ms apart).
func execSend(c *pmContainer, addr string, n int) string {
	return fmt.Sprintf("podman %s exec %s /podnet udp-send %s %d", strings.Join(podmanArgs, " "), c.Name, addr, n)
}

// runTrace runs the CLI in-process with buffers that the resolver's
// goroutine may write to as well, failing the test on a non-zero exit.
func runTrace(t *testing.T, args ...string) (stdout, stderr string) {
	t.Helper()
	var outb, errb syncbuf.Buffer
	code := run(args, &outb, &errb)
	if code != 0 {
		t.Fatalf("skbtrace %q: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, outb.String(), errb.String())
	}
	return outb.String(), errb.String()
}

// lines are a text's non-empty lines.
func lines(s string) []string {
	var l []string
	for _, x := range strings.Split(s, "\n") {
		if x != "" {
			l = append(l, x)
		}
	}
	return l
}
