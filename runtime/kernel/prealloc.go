package kernel

import (
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// noPreallocSince is the first kernel release (major, minor) whose tracing
// programs may use hash maps without preallocation: Linux 6.1
// (bpf_mem_alloc) made it safe, and no feature probe tells it without a
// kernel WARN on older kernels (see the runtime's allocOnUpdate).
var noPreallocSince = [2]int{6, 1}

// NoPrealloc reports whether this kernel's tracing programs may use hash
// maps that allocate their elements on update (BPF_F_NO_PREALLOC).
func NoPrealloc() bool { return noPrealloc() }

var noPrealloc = sync.OnceValue(func() bool {
	return ReleaseAtLeast(Release(), noPreallocSince[0], noPreallocSince[1])
})

// releaseVersion parses the major and minor numbers of a kernel release
// such as "6.12.38+deb13-amd64".
func releaseVersion(release string) ([2]int, bool) {
	parts := strings.SplitN(release, ".", 3)
	if len(parts) < 2 {
		return [2]int{}, false
	}
	minor := parts[1]
	if i := strings.IndexFunc(minor, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		minor = minor[:i]
	}
	major, err1 := strconv.Atoi(parts[0])
	min, err2 := strconv.Atoi(minor)
	if err1 != nil || err2 != nil {
		return [2]int{}, false
	}
	return [2]int{major, min}, true
}

// Release is the running kernel's major and minor version (6.1 is
// [6 1]), or zeros where uname's release does not parse.
func Release() [2]int { return release() }

var release = sync.OnceValue(func() [2]int {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return [2]int{}
	}
	v, _ := releaseVersion(unix.ByteSliceToString(u.Release[:]))
	return v
})

// ReleaseAtLeast reports whether release v is major.minor or later.
func ReleaseAtLeast(v [2]int, major, minor int) bool {
	return v[0] > major || v[0] == major && v[1] >= minor
}
