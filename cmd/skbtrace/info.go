package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/features"
	"golang.org/x/sys/unix"
)

// printInfo is --info: what this kernel's BPF supports, in bpftrace's
// sections (System, Build, Kernel helpers, Kernel features, Map types,
// Probe types), each answer found by loading a probe program or map once
// (cilium/ebpf's features).
func printInfo(w io.Writer) int {
	yes := func(err error) string {
		if err == nil {
			return "yes"
		}
		return "no"
	}
	var u unix.Utsname
	unix.Uname(&u)
	arch := unix.ByteSliceToString(u.Machine[:])
	fmt.Fprintf(w, "System\n  OS: Linux %s %s\n  Arch: %s\n\n", unix.ByteSliceToString(u.Release[:]), unix.ByteSliceToString(u.Version[:]), arch)
	fmt.Fprintf(w, "Build\n  version: skbtrace %s\n  Go: %s\n  LLVM: none (skbtrace emits BPF instructions itself)\n\n", version, runtime.Version())

	helper := func(pt ebpf.ProgramType, fn asm.BuiltinFunc) string { return yes(features.HaveProgramHelper(pt, fn)) }
	section(w, "Kernel helpers", [][2]string{
		{"dpath", helper(ebpf.Tracing, asm.FnDPath)},
		{"get_tai_ns", helper(ebpf.Kprobe, asm.FnKtimeGetTaiNs)},
		{"get_func_ip", helper(ebpf.Kprobe, asm.FnGetFuncIp)},
		{"jiffies64", helper(ebpf.Kprobe, asm.FnJiffies64)},
		{"lookup_percpu_elem", helper(ebpf.Kprobe, asm.FnMapLookupPercpuElem)},
		{"loop", helper(ebpf.Kprobe, asm.FnLoop)},
		{"for_each_map_elem", helper(ebpf.Kprobe, asm.FnForEachMapElem)},
		{"ringbuf_output", helper(ebpf.Kprobe, asm.FnRingbufOutput)},
		{"send_signal", helper(ebpf.Kprobe, asm.FnSendSignal)},
		{"probe_read_kernel", helper(ebpf.Kprobe, asm.FnProbeReadKernel)},
	})
	_, btfErr := os.Stat("/sys/kernel/btf/vmlinux")
	mods, _ := os.ReadDir("/sys/kernel/btf")
	section(w, "Kernel features", [][2]string{
		{"Instruction limit", map[bool]string{true: "1000000", false: "4096"}[features.HaveLargeInstructions() == nil]},
		{"Loop support", yes(features.HaveBoundedLoops())},
		{"btf", yes(btfErr)},
		{"module btf", map[bool]string{true: "yes", false: "no"}[len(mods) > 1]},
	})
	maps := [][2]string{}
	for _, m := range []struct {
		name string
		t    ebpf.MapType
	}{{"hash", ebpf.Hash}, {"percpu hash", ebpf.PerCPUHash}, {"array", ebpf.Array}, {"percpu array", ebpf.PerCPUArray},
		{"lru hash", ebpf.LRUHash}, {"stack_trace", ebpf.StackTrace}, {"perf_event_array", ebpf.PerfEventArray}, {"ringbuf", ebpf.RingBuf}} {
		maps = append(maps, [2]string{m.name, yes(features.HaveMapType(m.t))})
	}
	section(w, "Map types", maps)
	_, tracefs := os.Stat("/sys/kernel/tracing/events")
	section(w, "Probe types", [][2]string{
		{"kprobe", yes(features.HaveProgramType(ebpf.Kprobe))},
		{"tracepoint", yes(features.HaveProgramType(ebpf.TracePoint))},
		{"raw_tracepoint", yes(features.HaveProgramType(ebpf.RawTracepoint))},
		{"perf_event", yes(features.HaveProgramType(ebpf.PerfEvent))},
		{"fentry", yes(features.HaveProgramType(ebpf.Tracing))},
		{"kprobe_multi", yes(features.HaveBPFLinkKprobeMulti())},
		{"kprobe_session", yes(features.HaveBPFLinkKprobeSession())},
		{"uprobe_multi", yes(features.HaveBPFLinkUprobeMulti())},
		{"tracefs", yes(tracefs)},
	})
	return 0
}

// section prints one of --info's sections: its title, then "  name: value"
// lines, and an empty line.
func section(w io.Writer, title string, rows [][2]string) {
	var b strings.Builder
	b.WriteString(title + "\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "  %s: %s\n", r[0], r[1])
	}
	b.WriteString("\n")
	io.WriteString(w, b.String())
}
