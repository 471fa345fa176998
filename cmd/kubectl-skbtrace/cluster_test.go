package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skbtrace/skbtrace/internal/k8stest"
)

// kubeTestImage is the name the cluster test gives the skbtrace image it
// builds, never the default one.
const kubeTestImage = "localhost/skbtrace-kubetest"

// kubeNS is the namespace of the cluster test's pods.
const kubeNS = "skbtrace-kube"

// TestPluginOnCluster runs the plugin binary against a real single-node
// cluster (internal/k8stest) with the skbtrace image built by make image
// and imported into the node's containerd. Pods: A sends datagrams to B
// on port 9000, B (a second container) sends to C on port 9100. Tracing
// pod/A must show A's datagrams and none of B's to C (which node/NODE's
// trace shows); -w's pcapng must
// read back with tshark; SIGINT must leave no trace pod; a missing pod
// and an image the node cannot pull must fail in the user's terms.
func TestPluginOnCluster(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: a cluster, and skbtrace loads eBPF programs")
	}
	for _, tool := range []string{"podman", "tshark"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	k := k8stest.Cluster(t)
	image := buildImage(t, k)
	plugin := filepath.Join(t.TempDir(), "kubectl-skbtrace")
	if out, err := exec.Command("go", "build", "-o", plugin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	c := k.RunPod(t, kubeNS, "c", "udp-serve", "9100")
	bSpec := k.PodSpec(kubeNS, "b", "udp-serve", "9000")
	send := bSpec.Spec.Containers[0]
	send.Name, send.Args = "send", []string{"udp-send", c.Status.PodIP + ":9100", "100000"}
	bSpec.Spec.Containers = append(bSpec.Spec.Containers, send)
	b := k.CreatePod(t, bSpec)
	a := k.RunPod(t, kubeNS, "a", "udp-send", b.Status.PodIP+":9000", "100000")
	t.Logf("a %s -> b %s:9000, b -> c %s:9100", a.Status.PodIP, b.Status.PodIP, c.Status.PodIP)

	base := []string{"--kubeconfig", k.Kubeconfig, "-n", kubeNS, "--image", image, "--cri-socket", k.CRI.Socket}
	if caps := hostCaps(); caps != "" {
		base = append(base, "--capabilities", caps)
	}
	plug := func(ctx context.Context, args ...string) *exec.Cmd {
		return exec.CommandContext(ctx, plugin, append(append([]string{}, base...), args...)...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	t.Run("pod-filter", func(t *testing.T) {
		prog := "skb:* /l4proto == udp/ { print(saddr, daddr, dport) }"
		var stdout, stderr bytes.Buffer
		cmd := plug(ctx, "pod/a", "-e", prog, "--", "--duration", "8s")
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if err != nil {
			t.Fatalf("plugin: %v\nstderr:\n%s\nstdout:\n%s", err, stderr.String(), tail(stdout.String(), 40))
		}
		out := stdout.String()
		// The session as a user sees it (go test -v): README's example.
		t.Logf("kubectl skbtrace pod/a -n %s -e '%s' -- --duration 8s\n%s%s", kubeNS, prog, stderr.String(), head(out, 12))
		// skbtrace may follow an address with its pod's name.
		aToB := regexp.MustCompile(fmt.Sprintf(`saddr=%s( \(\S+\))? daddr=%s( \(\S+\))? dport=9000`,
			regexp.QuoteMeta(a.Status.PodIP), regexp.QuoteMeta(b.Status.PodIP)))
		if !aToB.MatchString(out) {
			t.Errorf("no %q in the trace of pod/a:\n%s\nstderr:\n%s", aToB, tail(out, 40), stderr.String())
		}
		if strings.Contains(out, "dport=9100") {
			t.Errorf("b's datagrams to c (dport=9100) in the trace of pod/a:\n%s", grep(out, "dport=9100", 10))
		}
		checkNoTracePods(t, k, 30*time.Second)
	})

	// The control: the node's trace does see b's datagrams to c, so their
	// absence above is the pod filter's doing.
	t.Run("node", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		cmd := plug(ctx, "node/"+k.Node, "-e", "skb:* /l4proto == udp && dport == 9100/ { print(saddr, daddr, dport) }", "--", "--duration", "5s")
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("plugin node/%s: %v\nstderr:\n%s", k.Node, err, stderr.String())
		}
		if !strings.Contains(stdout.String(), "dport=9100") {
			t.Errorf("no b-to-c datagram in the node's trace:\n%s\nstderr:\n%s", tail(stdout.String(), 20), stderr.String())
		}
		checkNoTracePods(t, k, 30*time.Second)
	})

	t.Run("write", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "a.pcapng")
		var stdout, stderr bytes.Buffer
		cmd := plug(ctx, "pod/a", "-w", file, "--", "--filter", "udp", "--duration", "8s")
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("plugin -w: %v\nstderr:\n%s", err, stderr.String())
		}
		out, err := exec.Command("tshark", "-r", file, "-T", "fields", "-e", "ip.src", "-e", "ip.dst", "-e", "udp.dstport").CombinedOutput()
		if err != nil {
			t.Fatalf("tshark -r: %v\n%s\nplugin stderr:\n%s", err, out, stderr.String())
		}
		want := a.Status.PodIP + "\t" + b.Status.PodIP + "\t9000"
		if !strings.Contains(string(out), want) {
			t.Errorf("no frame %q in tshark's reading:\n%s", want, tail(string(out), 20))
		}
		if strings.Contains(string(out), "\t9100") {
			t.Errorf("b's datagrams to c in pod/a's capture:\n%s", grep(string(out), "\t9100", 10))
		}
		checkNoTracePods(t, k, 30*time.Second)
	})

	t.Run("sigint", func(t *testing.T) {
		cmd := plug(ctx, "pod/a", "-e", "skb:* /l4proto == udp/ { @n = count() }")
		var stderr syncBuffer
		cmd.Stderr = &stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var all strings.Builder
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			all.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "Ctrl-C to end") {
				break
			}
		}
		time.Sleep(time.Second)
		cmd.Process.Signal(syscall.SIGINT)
		start := time.Now()
		for sc.Scan() {
			all.WriteString(sc.Text() + "\n")
		}
		err = cmd.Wait()
		t.Logf("exit %v %s after SIGINT", err, time.Since(start).Round(time.Millisecond))
		if code := cmd.ProcessState.ExitCode(); code != 0 && code != 130 {
			t.Errorf("exit code %d after SIGINT, want 0 or 130\nstdout:\n%s\nstderr:\n%s", code, tail(all.String(), 20), stderr.String())
		}
		if !strings.Contains(all.String(), "@n:") {
			t.Errorf("no @n map printed at the end:\n%s\nstderr:\n%s", tail(all.String(), 20), stderr.String())
		}
		checkNoTracePods(t, k, 0)
	})

	t.Run("missing-pod", func(t *testing.T) {
		var stderr bytes.Buffer
		cmd := plug(ctx, "pod/nope")
		cmd.Stderr = &stderr
		err := cmd.Run()
		want := `pod "nope" not found in namespace "` + kubeNS + `"`
		if cmd.ProcessState.ExitCode() != 1 || !strings.Contains(stderr.String(), want) {
			t.Errorf("%v, stderr %q; want exit 1 and %q", err, stderr.String(), want)
		}
	})

	t.Run("unpullable", func(t *testing.T) {
		var stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, plugin, "--kubeconfig", k.Kubeconfig, "-n", kubeNS, "--image", "localhost/skbtrace-nope:1",
			"--cri-socket", k.CRI.Socket, "--start-timeout", "90s", "pod/a")
		cmd.Stderr = &stderr
		err := cmd.Run()
		want := "the node cannot pull image localhost/skbtrace-nope:1: build it with make image and load it on the node, or pass --image"
		if cmd.ProcessState.ExitCode() != 1 || !strings.Contains(stderr.String(), want) {
			t.Errorf("%v, stderr %q; want exit 1 and %q", err, stderr.String(), want)
		}
		checkNoTracePods(t, k, 30*time.Second)
	})
}

// buildImage builds the skbtrace image with make image, saves it with
// podman and imports it into the node's containerd; it returns its name.
func buildImage(t *testing.T, k *k8stest.K8s) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	version := fmt.Sprintf("kubetest-%d", time.Now().UnixNano())
	ref := kubeTestImage + ":" + version
	if out, err := exec.Command("make", "-C", root, "image", "IMAGE="+kubeTestImage, "VERSION="+version).CombinedOutput(); err != nil {
		t.Fatalf("make image: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command("podman", "rmi", "-f", ref).Run() })
	tar := filepath.Join(t.TempDir(), "skbtrace.tar")
	if out, err := exec.Command("podman", "save", "-o", tar, ref).CombinedOutput(); err != nil {
		t.Fatalf("podman save: %v\n%s", err, out)
	}
	k.CRI.ImportImage(t, ref, tar)
	return ref
}

// checkNoTracePods fails the test if trace pods are still there after
// within (0: now).
func checkNoTracePods(t *testing.T, k *k8stest.K8s, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		l, err := k.Client.CoreV1().Pods(corev1.NamespaceAll).List(context.Background(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=skbtrace,app.kubernetes.io/component=trace"})
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Items) == 0 {
			return
		}
		if time.Now().After(deadline) {
			var names []string
			for _, p := range l.Items {
				names = append(names, p.Namespace+"/"+p.Name+" ("+string(p.Status.Phase)+")")
			}
			t.Errorf("trace pods left behind: %s", strings.Join(names, ", "))
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}

// grep is the first n lines of s that contain sub.
func grep(s, sub string, n int) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) && len(out) < n {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// hostCaps is "" where this machine's capability bounding set has
// CAP_SYS_RESOURCE (24), else the plugin's default capabilities without
// it: a runtime cannot grant what it lacks (some CI containers).
func hostCaps() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "CapBnd:"); ok {
			var m uint64
			fmt.Sscanf(strings.TrimSpace(v), "%x", &m)
			if m&(1<<24) == 0 {
				return "BPF,PERFMON,SYSLOG,SYS_PTRACE"
			}
		}
	}
	return ""
}

// head is the first n lines of s.
func head(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "")
}
