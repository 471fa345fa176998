package k8stest

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// containerdLock serialises the containerds of all tests on the machine:
// they share /run/containerd/runc, the shim sockets and /var/lib/cni.
const containerdLock = "/tmp/skbtrace-containerd.lock"

// lockTimeout bounds the wait for another test's containerd to go.
const lockTimeout = 15 * time.Minute

// flock takes an exclusive lock on path, waiting at most lockTimeout, and
// releases it at cleanup (registered first, so it runs after every later
// cleanup).
func flock(t testing.TB, path string) {
	t.Helper()
	unlock, err := lockFile(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(unlock)
}

// lockFile takes an exclusive lock on path, waiting at most lockTimeout;
// unlock releases it.
func lockFile(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, err
	}
	err = poll("lock "+path+" (held by another test's containerd)", lockTimeout, 100*time.Millisecond, func() (bool, error) {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == syscall.EWOULDBLOCK {
			return false, nil
		}
		return true, err
	})
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}
