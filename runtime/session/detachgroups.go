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

// ftraceWorkers close the links whose removal unregisters an ftrace ops:
// BPF trampolines (fentry, fexit: track()'s helpers, and skb: programs on
// the fentry backend) and kprobe-multi links (an fprobe each). Each such
// removal holds ftrace's ftrace_lock (a trampoline's also its
// direct_mutex) through an RCU-tasks-rude and, since Linux 6.0, an
// RCU-tasks grace period (ftrace_shutdown of a dynamic ops): one at a
// time whatever the workers, and a next run's kprobe-multi link or
// trampoline waits behind every one under way or queued on the lock. One
// worker keeps that to the one close under way when a run takes the
// attach gate (gate.go), which ends in the run's own start.
const ftraceWorkers = 1

// groupLinks sorts the helper's descriptors by what their removal takes:
// ftrace ops (link_type tracing or kprobe_multi in the link's fdinfo) and
// the rest (perf events of kprobes and tracepoints, raw tracepoints), each
// with workers of its own. For bench/vm/teardown.sh's comparisons,
// SKBTRACE_DETACH_WORKERS=N sets the rest's workers and
// SKBTRACE_DETACH_SPLIT=0 closes every link in one pool, as before.
func groupLinks(fds []int) []linkGroup {
	ftrace := linkGroup{name: "ftrace links", workers: ftraceWorkers}
	rest := linkGroup{name: "other links", workers: helperWorkers}
	if w, err := strconv.Atoi(os.Getenv("SKBTRACE_DETACH_WORKERS")); err == nil && w > 0 {
		rest.workers = w
	}
	split := os.Getenv("SKBTRACE_DETACH_SPLIT") != "0"
	for _, fd := range fds {
		if split && isFtraceLink(fd) {
			ftrace.fds = append(ftrace.fds, fd)
		} else {
			rest.fds = append(rest.fds, fd)
		}
	}
	var gs []linkGroup
	for _, g := range []linkGroup{ftrace, rest} {
		if len(g.fds) > 0 {
			gs = append(gs, g)
		}
	}
	return gs
}

// isFtraceLink reports whether fd is a BPF link whose removal unregisters
// an ftrace ops, by its fdinfo: a tracing program's on a function
// (fentry, fexit, fmod_ret) or a kprobe-multi link.
func isFtraceLink(fd int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/fdinfo/%d", fd))
	if err != nil {
		return false
	}
	for _, l := range bytes.Split(b, []byte("\n")) {
		if k, v, ok := bytes.Cut(l, []byte(":")); ok && string(k) == "link_type" {
			switch string(bytes.TrimSpace(v)) {
			case "tracing", "kprobe_multi":
				return true
			}
			return false
		}
	}
	return false
}
