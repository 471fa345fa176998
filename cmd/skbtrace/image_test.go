package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// testImage is the name `make image` gives the image this test builds, so
// that it never replaces the one a person built with the default name.
const testImage = "localhost/skbtrace-imagetest"

// TestImageTracesHostDatagrams builds the container image with `make image`
// and runs it under podman as deploy/kubernetes/daemonset.yaml runs it: the
// host's PID and network namespaces, all capabilities dropped but BPF,
// PERFMON, SYSLOG and SYS_RESOURCE, seccomp unconfined, tracefs mounted
// read-only, a read-only root. The container traces for a bounded time;
// the test sends three datagrams on the host's loopback meanwhile, and the
// container's output must show each of them leave.
func TestImageTracesHostDatagrams(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the container loads eBPF programs")
	}
	if _, err := exec.LookPath("podman"); err != nil {
		t.Skip("podman is not installed (apt-get install podman runc): the image cannot be built or run")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	version := fmt.Sprintf("imagetest-%d", time.Now().Unix())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	mk := exec.CommandContext(ctx, "make", "-C", root, "image", "IMAGE="+testImage, "VERSION="+version)
	if out, err := mk.CombinedOutput(); err != nil {
		t.Fatalf("make image: %v\n%s", err, out)
	}
	tag := testImage + ":" + version
	t.Cleanup(func() {
		exec.Command("podman", "rmi", "-f", tag, testImage+":latest").Run()
	})

	// The image: one layer (the binary), the entrypoint, the version label.
	out, err := exec.CommandContext(ctx, "podman", "image", "inspect", tag).Output()
	if err != nil {
		t.Fatalf("podman image inspect: %v", err)
	}
	var inspect []struct {
		Config struct {
			Entrypoint []string
			Labels     map[string]string
		}
		RootFS struct{ Layers []string }
	}
	if err := json.Unmarshal(out, &inspect); err != nil || len(inspect) != 1 {
		t.Fatalf("podman image inspect: %v\n%s", err, out)
	}
	img := inspect[0]
	if got := strings.Join(img.Config.Entrypoint, " "); got != "/usr/local/bin/skbtrace" {
		t.Errorf("entrypoint %q, want /usr/local/bin/skbtrace", got)
	}
	if got := img.Config.Labels["org.opencontainers.image.version"]; got != version {
		t.Errorf("org.opencontainers.image.version = %q, want %q", got, version)
	}
	if n := len(img.RootFS.Layers); n != 1 {
		t.Errorf("%d layers, want 1: the static binary alone", n)
	}

	run := func(args ...string) *exec.Cmd {
		return exec.CommandContext(ctx, "podman", append(append([]string{"run", "--rm"}, podmanHostFlags()...), args...)...)
	}
	out, err = run(tag, "--version").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "skbtrace "+version {
		t.Fatalf("skbtrace --version in the image: %v: %q, want %q", err, out, "skbtrace "+version)
	}

	// A closed port on the host's loopback, and a socket to send from.
	dst := freeUDPPort(t)
	src, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	sport := src.LocalAddr().(*net.UDPAddr).Port

	prog := fmt.Sprintf("skb:* /l4proto == udp && dport == %d/ { print(len, dev, saddr, sport, dport) }", dst.Port)
	cmd := run(append(daemonSetFlags(), tag, "--duration", "6s", "-e", prog)...)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Send once the probes are attached, which skbtrace says on stderr.
	var errText strings.Builder
	sc := bufio.NewScanner(stderr)
	attached := false
	for sc.Scan() {
		errText.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "Ctrl-C to end") {
			attached = true
			break
		}
	}
	if attached {
		for _, size := range []int{5, 6, 7} {
			if _, err := src.WriteTo(bytes.Repeat([]byte("x"), size), dst); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The rest of stderr, until the container exits.
	for sc.Scan() {
		errText.WriteString(sc.Text() + "\n")
	}
	if err := cmd.Wait(); err != nil || !attached {
		t.Fatalf("the container: %v (attached: %v)\nstderr:\n%s\nstdout:\n%s", err, attached, errText.String(), stdout.String())
	}
	// Each datagram as it is queued on lo: Ethernet, IPv4 and UDP headers
	// (42 bytes) and its payload.
	for _, size := range []int{5, 6, 7} {
		want := fmt.Sprintf("len=%d dev=lo saddr=127.0.0.1 sport=%d dport=%d", 42+size, sport, dst.Port)
		found := false
		for _, l := range strings.Split(stdout.String(), "\n") {
			if strings.Contains(l, " net_dev_queue ") && strings.HasSuffix(l, want) {
				found = true
			}
		}
		if !found {
			t.Errorf("no net_dev_queue line ending %q in the container's output:\n%s\nstderr:\n%s", want, stdout.String(), errText.String())
		}
	}
	imageMetrics(t, run, tag, version)
}

// imageMetrics runs the image's dropcount under --metrics as the DaemonSet
// does (on a free port rather than 9464), behind TLS and basic auth with
// the credentials deploy/kubernetes/web-config.sh makes, mounted where the
// DaemonSet mounts its Secret; sends three datagrams to a closed port on
// the host's loopback, and scrapes the container from the host as the
// PodMonitor does (https, the CA, server name skbtrace, the password): its
// build_info carries the image's version, and @drops counts the datagrams
// (at least three: the host may drop others there too). Without the
// password the scrape gets 401.
func imageMetrics(t *testing.T, run func(args ...string) *exec.Cmd, tag, version string) {
	for _, tool := range []string{"openssl", "htpasswd"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s for web-config.sh (apt-get install openssl apache2-utils): %v", tool, err)
		}
	}
	creds := filepath.Join(t.TempDir(), "creds")
	if out, err := exec.Command("bash", "../../deploy/kubernetes/web-config.sh", creds).CombinedOutput(); err != nil {
		t.Fatalf("web-config.sh: %v\n%s", err, out)
	}
	roots := x509.NewCertPool()
	ca, err := os.ReadFile(filepath.Join(creds, "ca.crt"))
	if err != nil || !roots.AppendCertsFromPEM(ca) {
		t.Fatalf("ca.crt: %v", err)
	}
	password, err := os.ReadFile(filepath.Join(creds, "password"))
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: "skbtrace"}}}
	defer client.CloseIdleConnections()
	addr := freePort(t)
	cmd := run(append(daemonSetFlags(), "-v", creds+":/etc/skbtrace/web:ro", tag, "--metrics", addr,
		"--web.config.file", "/etc/skbtrace/web/web-config.yml", "--duration", "20s", "dropcount")...)
	var errText lockedBuffer
	cmd.Stderr = &errText
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}()
	scrapeAs := func(user, pass string) (int, string) {
		req, _ := http.NewRequest("GET", "https://"+addr+"/metrics", nil)
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	scrape := func() string {
		if code, body := scrapeAs("skbtrace", string(password)); code == 200 {
			return body
		}
		return ""
	}
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(errText.String(), "Ctrl-C to end") || scrape() == "" {
		if time.Now().After(deadline) {
			t.Fatalf("the container serves no metrics on %s after 15 s:\n%s", addr, errText.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	dst := freeUDPPort(t)
	src, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	for range 3 {
		if _, err := src.WriteTo([]byte("x"), dst); err != nil {
			t.Fatal(err)
		}
	}
	info := fmt.Sprintf(`skbtrace_build_info{backend="none",version=%q} 1`, version)
	drops := regexp.MustCompile(`(?m)^skbtrace_drops_total\{chain="",dev="lo",location="__udp4_lib_rcv\+0x[0-9a-f]+",namespace="",netns="\d+",pod="",reason="NO_SOCKET",rule="",table=""\} (\d+)$`)
	var text string
	for {
		text = scrape()
		if m := drops.FindStringSubmatch(text); m != nil && strings.Contains(text, info+"\n") {
			if n, _ := strconv.Atoi(m[1]); n >= 3 {
				if code, body := scrapeAs("", ""); code != 401 || strings.Contains(body, "skbtrace_") {
					t.Errorf("a scrape without the password: %d:\n%s", code, body)
				}
				return
			}
		}
		if time.Now().After(deadline.Add(5 * time.Second)) {
			t.Fatalf("the container's metrics lack %s or three NO_SOCKET drops on lo:\n%s\nstderr:\n%s", info, text, errText.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// lockedBuffer is a bytes.Buffer a process writes while the test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// freeUDPPort returns a loopback UDP address no socket is bound to.
func freeUDPPort(t *testing.T) *net.UDPAddr {
	t.Helper()
	c, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := c.LocalAddr().(*net.UDPAddr)
	c.Close()
	return a
}

// daemonSetFlags are podman's equivalents of the DaemonSet's pod and
// container settings (deploy/kubernetes/daemonset.yaml).
func daemonSetFlags() []string {
	return []string{
		"--pid=host", "--network=host",
		"--cap-drop=all", "--cap-add=BPF,PERFMON,SYSLOG,SYS_RESOURCE",
		"--security-opt", "seccomp=unconfined",
		"--read-only",
		"-v", "/sys/kernel/tracing:/sys/kernel/tracing:ro",
	}
}

// podmanHostFlags are what podman needs on this machine type, a Docker
// container itself: podman's default ulimits (nofile and nproc above what
// the container allows) cannot be set without CAP_SYS_RESOURCE, so the
// test's own hard nofile and a modest nproc are given; crun refuses hybrid
// cgroups (v1 with a v2 mount at /sys/fs/cgroup/unified), runc accepts them
// and is used where installed.
func podmanHostFlags() []string {
	var flags []string
	if _, err := exec.LookPath("runc"); err == nil {
		flags = append(flags, "--runtime", "runc")
	}
	var nofile syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &nofile) == nil {
		flags = append(flags, fmt.Sprintf("--ulimit=nofile=%d:%d", nofile.Max, nofile.Max))
	}
	return append(flags, "--ulimit=nproc=4096:4096")
}
