package rules

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

// TestInNetnsGoesBack: fn runs in the namespace asked for, and afterwards
// every thread of the process is in its own again (a thread left there,
// the main one above all, would make /proc/self/ns/net name the other).
func TestInNetnsGoesBack(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for ip netns")
	}
	const name = "skbt-rules-innetns"
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Skipf("ip netns add: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", name).Run() })
	path := filepath.Join("/run/netns", name)
	own, other := inode(t, "/proc/self/ns/net"), inode(t, path)
	for range 50 {
		var seen uint64
		if err := inNetns(path, func() error { seen = inode(t, "/proc/thread-self/ns/net"); return nil }); err != nil {
			t.Fatal(err)
		}
		if seen != other {
			t.Fatalf("fn ran in %d, want %d", seen, other)
		}
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		var st unix.Stat_t
		if unix.Stat(filepath.Join("/proc/self/task", task.Name(), "ns/net"), &st) == nil && st.Ino != own {
			t.Errorf("thread %s is in network namespace %d, the process in %d", task.Name(), st.Ino, own)
		}
	}
	if got := inode(t, "/proc/self/ns/net"); got != own {
		t.Errorf("/proc/self/ns/net is %d after, %d before", got, own)
	}
}
