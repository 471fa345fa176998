package kernel

import (
	"errors"

	"golang.org/x/sys/unix"
)

// Capability numbers (linux/capability.h).
const (
	capSysAdmin = 21
	capPerfmon  = 38
	capBPF      = 39
)

// ErrNotPrivileged is what CheckPrivileges says to a user who may not load
// tracing programs.
var ErrNotPrivileged = errors.New("skbtrace needs root (or CAP_BPF and CAP_PERFMON)")

// CheckPrivileges reports whether this process may load and attach tracing
// programs: root, CAP_SYS_ADMIN, or CAP_BPF with CAP_PERFMON, effective.
// It answers before anything is tried, so that the user gets one line
// instead of a kernel refusal per thing attempted.
func CheckPrivileges() error {
	if unix.Geteuid() == 0 {
		return nil
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return ErrNotPrivileged
	}
	has := func(c uint) bool { return data[c/32].Effective&(1<<(c%32)) != 0 }
	if has(capSysAdmin) || has(capBPF) && has(capPerfmon) {
		return nil
	}
	return ErrNotPrivileged
}
