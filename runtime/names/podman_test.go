package names

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// sleeperImage is the image the podman tests build: a static Go program
// that waits for SIGTERM, FROM scratch (no image can be pulled here).
const sleeperImage = "localhost/skbtrace-names-sleeper"

// sleeperSource is the sleeper's program.
const sleeperSource = `package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT)
	<-c
}
`

// buildSleeper builds the sleeper image with podman and removes it when the
// test ends. It skips where podman is not installed.
func buildSleeper(t *testing.T) {
	t.Helper()
	needRoot(t)
	if _, err := exec.LookPath("podman"); err != nil {
		t.Skip("podman is not installed (apt-get install podman runc): no container to name")
	}
	dir := t.TempDir()
	files := map[string]string{
		"main.go":       sleeperSource,
		"go.mod":        "module sleeper\n\ngo 1.21\n",
		"Containerfile": "FROM scratch\nCOPY sleeper /sleeper\nENTRYPOINT [\"/sleeper\"]\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	build := exec.Command("go", "build", "-o", "sleeper", ".")
	build.Dir, build.Env = dir, append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the sleeper: %v\n%s", err, out)
	}
	if out, err := exec.Command("podman", "build", "-q", "-t", sleeperImage, dir).CombinedOutput(); err != nil {
		t.Fatalf("podman build: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command("podman", "rmi", "-f", sleeperImage).Run() })
}

// runSleeper runs the sleeper as a podman container on the bridge network
// and returns its main process's PID; the container is removed when the
// test ends.
func runSleeper(t *testing.T, name string) uint32 {
	t.Helper()
	exec.Command("podman", "rm", "-f", "-t", "0", name).Run()
	args := []string{"run", "-d", "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=4096:4096", "--network", "bridge", "--name", name}
	if _, err := exec.LookPath("runc"); err == nil {
		args = append(args, "--runtime", "runc")
	}
	if out, err := exec.Command("podman", append(args, sleeperImage)...).CombinedOutput(); err != nil {
		t.Fatalf("podman run %s: %v\n%s", name, err, out)
	}
	t.Cleanup(func() { exec.Command("podman", "rm", "-f", "-t", "0", name).Run() })
	out, err := exec.Command("podman", "inspect", "-f", "{{.State.Pid}} {{.Id}}", name).Output()
	if err != nil {
		t.Fatalf("podman inspect %s: %v", name, err)
	}
	f := strings.Fields(string(out))
	pid, err := strconv.ParseUint(f[0], 10, 32)
	if err != nil || pid == 0 {
		t.Fatalf("podman inspect %s: pid %q", name, out)
	}
	return uint32(pid)
}

// containerFacts are what the host says of a container's process, found
// without the resolver: its netns inode, its cgroup ID as a file handle
// (what bpf_get_current_cgroup_id returns), the host-side veth of its eth0.
type containerFacts struct {
	netns  uint64
	cgroup uint64
	veth   string
}

// factsOf reads a container process's facts.
func factsOf(t *testing.T, pid uint32) containerFacts {
	t.Helper()
	var f containerFacts
	f.netns = inodeOf(t, fmt.Sprintf("/proc/%d/ns/net", pid))
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		t.Fatal(err)
	}
	mnt, _, err := cgroup2Mount("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(l, "0::"); ok {
			h, _, err := unix.NameToHandleAt(unix.AT_FDCWD, filepath.Join(mnt, p), 0)
			if err != nil || len(h.Bytes()) != 8 {
				t.Fatalf("name_to_handle_at of %s: %v", p, err)
			}
			var id uint64
			for i, c := range h.Bytes() { // little-endian u64: the kernfs node ID
				id |= uint64(c) << (8 * i)
			}
			f.cgroup = id
		}
	}
	// sysfs shows the mounter's namespace: ask ip inside, "2: eth0@if8: ...".
	out, err := exec.Command("nsenter", "-t", fmt.Sprint(pid), "-n", "ip", "-o", "link", "show", "eth0").Output()
	if err != nil {
		t.Fatalf("reading the container's eth0 iflink: %v", err)
	}
	_, after, _ := strings.Cut(string(out), "eth0@if")
	idx, _ := strconv.Atoi(strings.SplitN(after, ":", 2)[0])
	ifc, err := net.InterfaceByIndex(idx)
	if err != nil {
		t.Fatalf("the host-side veth (ifindex %d): %v", idx, err)
	}
	f.veth = ifc.Name
	return f
}

// TestPodman names a podman container by its netns, pid, cgroup and
// host-side veth, matches it by a container glob, and finds a container
// started after Start from lookups alone (Poll an hour: the misses nudge
// the refresher), with OnChange called.
func TestPodman(t *testing.T) {
	buildSleeper(t)
	const name = "skbtrace-names-test"
	pid := runSleeper(t, name)
	facts := factsOf(t, pid)

	r := refreshed(t, Options{Warn: t.Logf})
	id, ok := r.Netns(facts.netns)
	if !ok || id.Label() != "podman:"+name || id.Runtime != "podman" || id.Container != name ||
		len(id.Containers) != 1 || id.Containers[0] != name || len(id.ContainerID) != 64 {
		t.Errorf("Netns(%d) = %+v, %v; want podman:%s", facts.netns, id, ok, name)
	}
	if !strings.HasPrefix(id.NetnsName, "netns-") {
		t.Logf("podman's netns has no ip netns name (%q): older podman", id.NetnsName)
	}
	if p, ok := r.Pid(pid); !ok || p.Container != name || p.ContainerID != id.ContainerID {
		t.Errorf("Pid(%d) = %+v, %v", pid, p, ok)
	}
	if inode := cgroupInode(t, pid); inode != facts.cgroup {
		t.Errorf("the cgroup directory's inode %d is not its file handle's ID %d", inode, facts.cgroup)
	}
	if c, ok := r.Cgroup(facts.cgroup); !ok || c.Container != name || c.Runtime != "podman" {
		t.Errorf("Cgroup(%d) = %+v, %v", facts.cgroup, c, ok)
	}
	if d, ok := r.Dev(facts.veth); !ok || d.Label() != "podman:"+name {
		t.Errorf("Dev(%s) = %+v, %v; status %q", facts.veth, d, ok, r.Status())
	}
	if m := r.Match(Selector{Containers: []string{"skbtrace-names-*"}}); m[facts.netns].Container != name {
		t.Errorf("Match(Containers skbtrace-names-*) = %v, want %d", m, facts.netns)
	}
	if m := r.Match(Selector{Containers: []string{"other-*"}}); len(m) != 0 {
		t.Errorf("Match(Containers other-*) = %v", m)
	}
	if !statusHas(r, "podman: ") {
		t.Errorf("no podman line in %q", r.Status())
	}
	for _, l := range r.Status() {
		t.Log(l)
	}

	t.Run("late", func(t *testing.T) {
		r := New(Options{Poll: time.Hour, Warn: t.Logf})
		var changed atomic.Int32
		r.OnChange(func() { changed.Add(1) })
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		if err := r.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		before := changed.Load()
		const late = "skbtrace-names-late"
		lpid := runSleeper(t, late)
		ino := inodeOf(t, fmt.Sprintf("/proc/%d/ns/net", lpid))
		eventually(t, 10*time.Second, "the late container's name", func() bool {
			id, ok := r.Netns(ino)
			return ok && id.Container == late
		})
		if changed.Load() == before {
			t.Error("OnChange was not called after the refresh that found the late container")
		}
	})
}

// cgroupInode stats a process's cgroup v2 directory.
func cgroupInode(t *testing.T, pid uint32) uint64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		t.Fatal(err)
	}
	v2, _, _ := parseProcCgroup(b)
	mnt, _, err := cgroup2Mount("/proc")
	if err != nil {
		t.Fatal(err)
	}
	return inodeOf(t, filepath.Join(mnt, v2))
}
