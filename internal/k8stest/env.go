package k8stest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Version is the Kubernetes release whose kube-apiserver and kubelet
// Cluster runs (as test/k8s/bins.sh builds them).
const Version = "v1.37.2"

// CacheDir is where bins.sh puts the Kubernetes binaries (under Version)
// and where Images keeps the image tarballs: $SKBTRACE_K8S_CACHE, or
// ~/.cache/skbtrace-k8s.
func CacheDir() string {
	if d := os.Getenv("SKBTRACE_K8S_CACHE"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		home = "/root"
	}
	return filepath.Join(home, ".cache", "skbtrace-k8s")
}

// needRoot skips the test when it does not run as root: nothing here works
// without it.
func needRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("k8stest: needs root (containerd, network namespaces, cgroups)")
	}
}

// needTools skips the test, naming what is missing, when a program is not
// installed.
func needTools(t testing.TB, tools ...string) {
	t.Helper()
	var missing []string
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if len(missing) > 0 {
		t.Skipf("k8stest: not installed: %s (apt-get install containerd runc containernetworking-plugins etcd-server podman iproute2 util-linux)", strings.Join(missing, ", "))
	}
}

// goTool is the go command that runs the tests.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// repoRoot is the skbtrace checkout the test runs in: the nearest parent
// of the working directory whose go.mod is skbtrace's.
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(b), "module github.com/skbtrace/skbtrace\n") {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("k8stest: no skbtrace go.mod above the working directory")
		}
		dir = parent
	}
}

// tempDir makes a directory with a short path under /tmp (a unix socket's
// path must stay under 108 bytes, which t.TempDir's need not) and removes
// it at cleanup.
func tempDir(t testing.TB, prefix string) string {
	t.Helper()
	d, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
