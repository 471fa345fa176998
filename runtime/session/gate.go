package session

import (
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// The detach helper of one run (handoff.go) and the attach of the next
// take the same kernel locks: a trampoline's or a kprobe's removal holds
// ftrace's and the tracing events' mutexes through RCU grace periods, which
// an attach waits behind, and a restarted skbtrace, the usual debugging
// loop, took three times as long to be ready. The attach gate is a lock
// file between them: a run holds it shared while it attaches functions
// (runs attach side by side); before each close the helper's workers look
// whether any run holds it, and where one does they wait until none does.
// So an attach waits for the closes already under way at most (the
// helper's few workers: helperWorkers), and the helper waits while any run
// attaches. It is an flock: the kernel drops it when its holder exits,
// killed or not, so no run can leave it held.

// gatePath is the attach gate's file: under /run where the system has one,
// else the temporary directory.
func gatePath() string {
	dir := "/run"
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "skbtrace-attach.lock")
}

// openGate opens the gate's file (created, root's alone, never through a
// symbolic link); -1 where it cannot be, and the gate is then not used.
func openGate() int {
	fd, err := unix.Open(gatePath(), unix.O_RDONLY|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return -1
	}
	return fd
}

// HoldAttachGate holds the attach gate from a run's very start until the
// returned function is called (again: a no-op); Start holds it too while
// it attaches. A run that takes it before decoding BTF and compiling, not
// only at its attach, lets the close an earlier run's helper has under
// way end meanwhile: the helper begins no other, and the run's links then
// wait for none.
func HoldAttachGate() (release func()) {
	var once sync.Once
	r := holdAttachGate()
	return func() { once.Do(r) }
}

// holdAttachGate holds the gate shared until the returned function is
// called: the detach helpers of earlier runs pause meanwhile.
func holdAttachGate() (release func()) {
	fd := openGate()
	if fd < 0 {
		return func() {}
	}
	if err := unix.Flock(fd, unix.LOCK_SH); err != nil {
		unix.Close(fd)
		return func() {}
	}
	return func() { unix.Close(fd) }
}

// gated runs close (a link's close, in the detach helper) once no run
// holds the gate (fd: the worker's own descriptor of it; -1: no gate),
// and reports how long it waited for that. The look takes the gate
// exclusively without waiting and lets it go at once: it fails only while
// a run holds it (or another worker looks), and then the worker waits for
// it.
func gated(fd int, close func()) (waited time.Duration) {
	if fd >= 0 {
		if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
			t := time.Now()
			unix.Flock(fd, unix.LOCK_EX)
			waited = time.Since(t)
		}
		unix.Flock(fd, unix.LOCK_UN)
	}
	close()
	return waited
}
