package kernel_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/skbtrace/skbtrace/internal/bpfprogtest"
	"github.com/skbtrace/skbtrace/runtime/kernel"
)

// BenchmarkPacketProgs measures one listing of the loaded packet programs,
// what a session whose bpf: probes wait for programs does every second
// (runtime.BPFPollInterval), with 50 tc programs of the benchmark's own
// loaded beside whatever else is.
func BenchmarkPacketProgs(b *testing.B) {
	for i := range 50 {
		p, err := ebpf.NewProgram(bpfprogtest.TCDropPort(fmt.Sprintf("bk%d_%d", os.Getpid()%10000, i), 9))
		if err != nil {
			b.Fatal(err)
		}
		defer p.Close()
	}
	n := 0
	for b.Loop() {
		progs, err := kernel.PacketProgs()
		if err != nil {
			b.Fatal(err)
		}
		n = len(progs)
	}
	b.ReportMetric(float64(n), "programs")
}
