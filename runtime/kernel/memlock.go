package kernel

import (
	"sync"

	"golang.org/x/sys/unix"
)

// MemlockCharged reports whether this kernel charges BPF maps and programs
// to the process's locked-memory limit (RLIMIT_MEMLOCK): kernels before
// Linux 5.11, which moved the charge to the memory cgroup.
func MemlockCharged() bool { return memlockCharged() }

var memlockCharged = sync.OnceValue(func() bool {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return false
	}
	v, ok := releaseVersion(unix.ByteSliceToString(u.Release[:]))
	return ok && (v[0] < 5 || v[0] == 5 && v[1] < 11)
})
