package session

import (
	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/skbtrace/skbtrace/runtime/kernel"
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
// decides: 6.1 or later (kernel.NoPrealloc).

// allocOnUpdate returns the maps to create: where the kernel allows it, the
// hash maps as copies that allocate on update (BPF_F_NO_PREALLOC); the
// caller's specs stay as they are.
func allocOnUpdate(specs map[string]*ebpf.MapSpec) map[string]*ebpf.MapSpec {
	if !kernel.NoPrealloc() {
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
