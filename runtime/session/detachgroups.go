package session

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// linkGroup is links the detach helper closes with workers of their own:
// links whose removal takes different kernel locks close side by side,
// so that the ones do not wait in the others' queue.
type linkGroup struct {
	name    string
	fds     []int
	workers int
}

// trampolineWorkers close the BPF trampolines' links (fentry, fexit:
// track()'s helpers, and skb: programs on the fentry backend). Each
// removal updates its trampoline under ftrace's direct_mutex and, since
// Linux 6.0, waits an RCU-tasks grace period there: one at a time
// whatever the workers, and two keep the next one queued.
const trampolineWorkers = 2

// groupLinks sorts the helper's descriptors by what their removal takes:
// trampolines (link_type tracing in the link's fdinfo) and the rest
// (perf events of kprobes and tracepoints, kprobe-multi links, raw
// tracepoints), each with workers of its own. For bench/vm/teardown.sh's
// comparisons, SKBTRACE_DETACH_WORKERS=N sets the rest's workers and
// SKBTRACE_DETACH_SPLIT=0 closes every link in one pool, as before.
func groupLinks(fds []int) []linkGroup {
	tramp := linkGroup{name: "trampolines", workers: trampolineWorkers}
	rest := linkGroup{name: "other links", workers: helperWorkers}
	if w, err := strconv.Atoi(os.Getenv("SKBTRACE_DETACH_WORKERS")); err == nil && w > 0 {
		rest.workers = w
	}
	split := os.Getenv("SKBTRACE_DETACH_SPLIT") != "0"
	for _, fd := range fds {
		if split && isTrampolineLink(fd) {
			tramp.fds = append(tramp.fds, fd)
		} else {
			rest.fds = append(rest.fds, fd)
		}
	}
	var gs []linkGroup
	for _, g := range []linkGroup{tramp, rest} {
		if len(g.fds) > 0 {
			gs = append(gs, g)
		}
	}
	return gs
}

// isTrampolineLink reports whether fd is a BPF link of a tracing program
// on a function (fentry, fexit, fmod_ret), by its fdinfo.
func isTrampolineLink(fd int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/fdinfo/%d", fd))
	if err != nil {
		return false
	}
	for _, l := range bytes.Split(b, []byte("\n")) {
		if k, v, ok := bytes.Cut(l, []byte(":")); ok && string(k) == "link_type" {
			return string(bytes.TrimSpace(v)) == "tracing"
		}
	}
	return false
}
