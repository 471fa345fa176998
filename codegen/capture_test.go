package codegen_test

import (
	"fmt"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/skbtrace/skbtrace/codegen"
)

// TestCaptureLoads puts capture() through the verifier at each snap length
// and record buffer: fragments copied (a page translation given) or not,
// a per-CPU scratch record where it fits in 32 KiB and an array indexed
// by CPU where it does not, and a perf buffer's snap length kept within a
// perf record.
func TestCaptureLoads(t *testing.T) {
	const script = `tracepoint:net:net_dev_start_xmit /pcap("vlan 10 or tcp")/ { capture() }`
	for _, c := range []struct {
		snap   int
		perf   bool
		frags  bool
		typ    ebpf.MapType
		maxLen uint32
	}{
		{codegen.MaxSnaplen, false, true, ebpf.Array, codegen.MaxSnaplen},
		{codegen.MaxSnaplen, false, false, ebpf.Array, codegen.MaxSnaplen},
		{codegen.MaxSnaplen, true, true, ebpf.Array, 0xffff - codegen.CaptureHead},
		{256, false, true, ebpf.PerCPUArray, 256},
		{256, true, false, ebpf.PerCPUArray, 256},
		{16000, false, true, ebpf.PerCPUArray, 16000},
	} {
		t.Run(fmt.Sprintf("snap=%d,perf=%v,frags=%v", c.snap, c.perf, c.frags), func(t *testing.T) {
			opts := codegen.Options{Snaplen: c.snap, PerfEvents: c.perf}
			if c.frags {
				opts.PageMul, opts.PageOff = 64, 0x5088000000000
			}
			out := compileWith(t, script, opts)
			m := out.Maps[codegen.CaptureMap]
			if m.Type != c.typ || m.ValueSize-codegen.CaptureHead > 2*c.maxLen+4 || (!c.frags && m.ValueSize-codegen.CaptureHead > c.maxLen+4) {
				t.Errorf("capture map %v of %d bytes", m.Type, m.ValueSize)
			}
			load(t, out)
		})
	}
}
