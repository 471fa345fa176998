package names

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// needRoot skips a test that changes the host's namespaces or runs
// containers where it is not root.
func needRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: it adds network namespaces and runs containers")
	}
}

// addNetns adds an `ip netns` namespace for the test's life and returns its
// name and inode.
func addNetns(t *testing.T, prefix string) (string, uint64) {
	t.Helper()
	needRoot(t)
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("ip (iproute2) is not installed")
	}
	name := fmt.Sprintf("%s-%d", prefix, os.Getpid())
	exec.Command("ip", "netns", "del", name).Run()
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add %s: %v\n%s", name, err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", name).Run() })
	return name, inodeOf(t, "/run/netns/"+name)
}

// inodeOf stats a file's inode.
func inodeOf(t testing.TB, p string) uint64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		t.Fatalf("stat %s: %v", p, err)
	}
	return st.Ino
}

// refreshed returns a resolver that has refreshed once.
func refreshed(t *testing.T, o Options) *Resolver {
	t.Helper()
	r := New(o)
	t.Cleanup(r.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.Refresh(ctx); err != nil {
		t.Fatalf("Refresh: %v", err)
	}
	return r
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// statusHas reports whether a Status line starts with prefix.
func statusHas(r *Resolver, prefix string) bool {
	for _, l := range r.Status() {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}
