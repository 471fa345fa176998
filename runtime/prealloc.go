package runtime

import (
	"strconv"
	"strings"
	"sync"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// Hash maps are created with BPF_F_NO_PREALLOC where the kernel allows it in
// tracing programs: a preallocated map of maxEntries costs its whole size in
// kernel memory at creation (a per-CPU one, each CPU's copy), which was the
// largest part of loading a one-line script.
//
// Linux 6.1 (bpf_mem_alloc, commit "bpf: Relax the requirement to use
// preallocated hash maps in tracing progs") made run-time allocation safe in
// tracing programs and dropped the verifier's check. Before it the verifier
// refuses such maps to perf_event programs and to every tracing program on
// PREEMPT_RT, and elsewhere loads them with a kernel WARN. No feature probe
// tells these apart without triggering that WARN, so the kernel's version
// decides: 6.1 or later.

// noPreallocSince is the first kernel release (major, minor) whose tracing
// programs may use hash maps without preallocation.
var noPreallocSince = [2]int{6, 1}

// noPrealloc reports whether this kernel's tracing programs may use hash
// maps that allocate their elements on update.
var noPrealloc = sync.OnceValue(func() bool {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return false
	}
	v, ok := releaseVersion(unix.ByteSliceToString(u.Release[:]))
	return ok && (v[0] > noPreallocSince[0] || v[0] == noPreallocSince[0] && v[1] >= noPreallocSince[1])
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

// allocOnUpdate returns the maps to create: where the kernel allows it, the
// hash maps as copies that allocate on update (BPF_F_NO_PREALLOC); the
// caller's specs stay as they are.
func allocOnUpdate(specs map[string]*ebpf.MapSpec) map[string]*ebpf.MapSpec {
	if !noPrealloc() {
		return specs
	}
	out := make(map[string]*ebpf.MapSpec, len(specs))
	for name, s := range specs {
		if s.Type == ebpf.Hash || s.Type == ebpf.PerCPUHash {
			s = s.Copy()
			s.Flags |= unix.BPF_F_NO_PREALLOC
		}
		out[name] = s
	}
	return out
}
