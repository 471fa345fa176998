package kernel

import (
	"os"
	"runtime"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/features"
)

// Arch is the architecture (a GOARCH) skbtrace and so the kernel run on.
const Arch = runtime.GOARCH

// HaveFuncIPHelper reports whether this kernel's kprobe and tracing programs
// may call bpf_get_func_ip (Linux 5.15 and later). Where they may not, the
// code generator takes the function's address another way
// (codegen.Options.HaveFuncIP). The probe loads one small program,
// once per process.
func HaveFuncIPHelper() bool {
	return features.HaveProgramHelper(ebpf.Kprobe, asm.FnGetFuncIp) == nil
}

// HaveHelper reports whether this kernel's programs may call a helper of
// every program type's (bpf_for_each_map_elem, 5.13; bpf_loop, 5.17):
// where not, a script's construct that needs it is a positioned error
// naming it (codegen.Options.HaveHelper). Each answer costs one small
// program's load, once per process.
func HaveHelper(fn asm.BuiltinFunc) bool {
	return features.HaveProgramHelper(ebpf.RawTracepoint, fn) == nil
}

// HaveRingBuffer reports whether the kernel has BPF ring buffers (5.8+).
func HaveRingBuffer() bool {
	return features.HaveMapType(ebpf.RingBuf) == nil
}

// HaveKprobes reports whether the kernel has kprobes: the perf "kprobe" PMU
// is registered where CONFIG_KPROBES (and kprobe events) are built in.
func HaveKprobes() bool {
	_, err := os.Stat("/sys/bus/event_source/devices/kprobe")
	return err == nil
}
