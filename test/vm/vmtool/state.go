package main

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"unsafe"
)

// kernelState is what a traced run may leave behind in the kernel: BPF objects,
// pinned files, kprobe events, kprobes and ftrace entries.
type kernelState struct {
	Progs, Maps, Links int
	Pinned             int // entries under /sys/fs/bpf
	KprobeEvents       int // lines of tracing/kprobe_events
	EnabledFuncs       int // lines of tracing/enabled_functions: functions with ftrace ops
	Kprobes            int // lines of debug/kprobes/list
}

func (s kernelState) String() string {
	return fmt.Sprintf("%d programs, %d maps, %d links, %d pinned, %d kprobe_events, %d enabled_functions, %d kprobes",
		s.Progs, s.Maps, s.Links, s.Pinned, s.KprobeEvents, s.EnabledFuncs, s.Kprobes)
}

// within reports whether s holds no more of anything than limit: what a
// case leaves behind is more than the kernel held before it, while an
// object that was still being freed when the case began (the backend probe
// of the -l run after the case before) may be gone by its end.
func (s kernelState) within(limit kernelState) bool {
	return s.Progs <= limit.Progs && s.Maps <= limit.Maps && s.Links <= limit.Links && s.Pinned <= limit.Pinned &&
		s.KprobeEvents <= limit.KprobeEvents && s.EnabledFuncs <= limit.EnabledFuncs && s.Kprobes <= limit.Kprobes
}

func readKernelState() kernelState {
	var s kernelState
	s.Progs = countIDs(bpfProgGetNextID)
	s.Maps = countIDs(bpfMapGetNextID)
	s.Links = countIDs(bpfLinkGetNextID)
	if ents, err := os.ReadDir("/sys/fs/bpf"); err == nil {
		s.Pinned = len(ents)
	}
	s.KprobeEvents = countLines("/sys/kernel/tracing/kprobe_events")
	s.EnabledFuncs = countLines("/sys/kernel/tracing/enabled_functions")
	s.Kprobes = countLines("/sys/kernel/debug/kprobes/list")
	return s
}

func countLines(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return -1
	}
	return strings.Count(string(b), "\n")
}

const (
	bpfProgGetNextID = 11
	bpfMapGetNextID  = 12
	bpfLinkGetNextID = 31
)

// countIDs walks one of the kernel's BPF id spaces with BPF_*_GET_NEXT_ID.
func countIDs(cmd uintptr) int {
	var attr [4]uint32 // start_id, next_id, open_flags
	n := 0
	for {
		_, _, e := syscall.Syscall(sysBPF, cmd, uintptr(unsafe.Pointer(&attr[0])), unsafe.Sizeof(attr))
		if e != 0 {
			return n
		}
		n++
		attr[0] = attr[1]
	}
}
