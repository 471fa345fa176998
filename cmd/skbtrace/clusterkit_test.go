package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skbtrace/skbtrace/internal/k8stest"
)

// kpod is a pod of the test cluster as skbtrace sees it: its address,
// its network namespace's inode, its host-side veth, and its containers
// by name, for ExecSync.
type kpod struct {
	Namespace, Name string
	IP              string
	PID             int    // main's process, as the host sees it
	Netns           uint64 // inode of its network namespace
	Veth            string // the host side of its eth0
	containers      map[string]string
	cri             runtimeapi.RuntimeServiceClient
}

// label is how skbtrace names the pod: NAMESPACE/NAME.
func (p *kpod) label() string { return p.Namespace + "/" + p.Name }

func (p *kpod) String() string {
	return fmt.Sprintf("%s (%s, netns %d, %s)", p.label(), p.IP, p.Netns, p.Veth)
}

// clusterPod finds what kubelet made of pod through the CRI: its running
// containers, main's PID, and from that the netns inode and host veth.
func clusterPod(t *testing.T, k *k8stest.K8s, pod *corev1.Pod) *kpod {
	t.Helper()
	p := &kpod{Namespace: pod.Namespace, Name: pod.Name, IP: pod.Status.PodIP, containers: map[string]string{}, cri: k.CRI.Runtime}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	l, err := k.CRI.Runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{
		State:         &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING},
		LabelSelector: map[string]string{k8stest.LabelPodUID: string(pod.UID)},
	}})
	if err != nil {
		t.Fatalf("CRI ListContainers of %s/%s: %v", pod.Namespace, pod.Name, err)
	}
	for _, c := range l.Containers {
		p.containers[c.Metadata.Name] = c.Id
	}
	id, ok := p.containers[k8stest.ContainerName]
	if !ok {
		t.Fatalf("pod %s/%s: no running %s container among %v", pod.Namespace, pod.Name, k8stest.ContainerName, p.containers)
	}
	st, err := k.CRI.Runtime.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id, Verbose: true})
	if err != nil {
		t.Fatalf("CRI ContainerStatus of %s/%s: %v", pod.Namespace, pod.Name, err)
	}
	var info struct {
		PID int `json:"pid"`
	}
	json.Unmarshal([]byte(st.Info["info"]), &info)
	if info.PID <= 0 {
		t.Fatalf("pod %s/%s: no PID in the CRI's verbose status", pod.Namespace, pod.Name)
	}
	p.PID = info.PID
	fi, err := os.Stat(p.netnsPath())
	if err != nil {
		t.Fatal(err)
	}
	p.Netns = fi.Sys().(*syscall.Stat_t).Ino
	out, err := exec.Command("nsenter", "--net="+p.netnsPath(), "ip", "-j", "link", "show", "eth0").Output()
	if err != nil {
		t.Fatalf("eth0 of %s/%s: %v", pod.Namespace, pod.Name, err)
	}
	var links []struct {
		LinkIndex int `json:"link_index"`
	}
	if err := json.Unmarshal(out, &links); err != nil || len(links) != 1 {
		t.Fatalf("eth0 of %s/%s: %q: %v", pod.Namespace, pod.Name, out, err)
	}
	ifc, err := net.InterfaceByIndex(links[0].LinkIndex)
	if err != nil {
		t.Fatalf("host side of %s/%s's eth0 (ifindex %d): %v", pod.Namespace, pod.Name, links[0].LinkIndex, err)
	}
	p.Veth = ifc.Name
	if p.IP == "" {
		t.Fatalf("pod %s/%s has no IP", pod.Namespace, pod.Name)
	}
	return p
}

func (p *kpod) netnsPath() string { return fmt.Sprintf("/proc/%d/ns/net", p.PID) }

// exec runs /podnet with args in the pod's container (CRI ExecSync, at
// most 30 s); a failure fails the test. podnet's sends are bounded by
// their count.
func (p *kpod) exec(t *testing.T, container string, args ...string) string {
	t.Helper()
	id, ok := p.containers[container]
	if !ok {
		t.Fatalf("pod %s has no container %q", p, container)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	r, err := p.cri.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: append([]string{"/podnet"}, args...), Timeout: 30})
	if err != nil || r.ExitCode != 0 {
		var stderr []byte
		var code int32 = -1
		if r != nil {
			stderr, code = r.Stderr, r.ExitCode
		}
		t.Fatalf("/podnet %s in %s: exit %d, %v: %s", strings.Join(args, " "), p, code, err, stderr)
	}
	return string(r.Stdout)
}

// udpSend sends n datagrams from the pod's main container to to:port.
func (p *kpod) udpSend(t *testing.T, to *kpod, port, n int) {
	t.Helper()
	p.exec(t, k8stest.ContainerName, "udp-send", net.JoinHostPort(to.IP, strconv.Itoa(port)), strconv.Itoa(n))
}

// nft loads an nftables ruleset into the pod's network namespace (never
// the host's), or with args runs nft with them there.
func (p *kpod) nft(t *testing.T, ruleset string, args ...string) {
	t.Helper()
	if err := p.tryNft(ruleset, args...); err != nil {
		t.Fatal(err)
	}
}

func (p *kpod) tryNft(ruleset string, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	argv := []string{"--net=" + p.netnsPath(), "nft"}
	if len(args) == 0 {
		argv = append(argv, "-f", "-")
	}
	cmd := exec.CommandContext(ctx, "nsenter", append(argv, args...)...)
	cmd.Stdin = strings.NewReader(ruleset)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("nft %q in %s: %v: %s", args, p, err, out)
	}
	return nil
}

// clusterTrace is skbtrace running as a child process (the test binary with
// SKBTRACE_ARGS, as startCLI runs it), whose output the test reads while
// it runs.
type clusterTrace struct {
	t        *testing.T
	args     []string
	cmd      *exec.Cmd
	mu       sync.Mutex
	out, err strings.Builder
	done     chan struct{}
	stopOnce sync.Once
}

// startClusterTrace starts skbtrace with args and waits, at most 60 s, until it
// says it is tracing. It is stopped (SIGTERM, then SIGKILL after 10 s)
// when the test ends, if not before.
func startClusterTrace(t *testing.T, args ...string) *clusterTrace {
	t.Helper()
	tr := &clusterTrace{t: t, args: args, done: make(chan struct{})}
	tr.cmd = exec.Command(os.Args[0])
	tr.cmd.Env = append(os.Environ(), "SKBTRACE_ARGS="+strings.Join(args, "\x1f"))
	stdout, err := tr.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := tr.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	copyLines := func(r *bufio.Scanner, b *strings.Builder) {
		defer wg.Done()
		r.Buffer(make([]byte, 1<<20), 1<<20)
		for r.Scan() {
			tr.mu.Lock()
			b.WriteString(r.Text() + "\n")
			tr.mu.Unlock()
		}
	}
	wg.Add(2)
	go copyLines(bufio.NewScanner(stdout), &tr.out)
	go copyLines(bufio.NewScanner(stderr), &tr.err)
	go func() {
		wg.Wait()
		tr.cmd.Wait()
		close(tr.done)
	}()
	t.Cleanup(func() { tr.stop() })
	tr.waitFor("it says it is tracing", 60*time.Second, func(_, stderr string) bool {
		return strings.Contains(stderr, "skbtrace: tracing ")
	})
	return tr
}

// output is what skbtrace has written so far.
func (tr *clusterTrace) output() (stdout, stderr string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.out.String(), tr.err.String()
}

// waitFor waits, at most timeout, until cond holds of the output so far;
// it fails the test, with the output, if it does not or skbtrace ends.
func (tr *clusterTrace) waitFor(what string, timeout time.Duration, cond func(stdout, stderr string) bool) {
	tr.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		stdout, stderr := tr.output()
		if cond(stdout, stderr) {
			return
		}
		select {
		case <-tr.done:
			stdout, stderr = tr.output()
			if cond(stdout, stderr) {
				return
			}
			tr.t.Fatalf("skbtrace %q ended before %s (%v):\nstdout:\n%s\nstderr:\n%s", tr.args, what, tr.cmd.ProcessState, stdout, stderr)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			tr.t.Fatalf("skbtrace %q: not within %s: %s\nstdout:\n%s\nstderr:\n%s", tr.args, timeout, what, stdout, stderr)
		}
	}
}

// stop ends skbtrace (SIGTERM, then SIGKILL after 10 s) and returns all it
// wrote.
func (tr *clusterTrace) stop() (stdout, stderr string) {
	tr.stopOnce.Do(func() {
		tr.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-tr.done:
		case <-time.After(10 * time.Second):
			tr.cmd.Process.Kill()
			<-tr.done
		}
	})
	return tr.output()
}
