package codegen_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/skbtrace/skbtrace/codegen"
)

// BenchmarkProbesOnOnePoint measures what an event costs ten probes on one
// tracepoint (raw_syscalls:sys_enter, each counting this process's
// getpriority calls): as the one program they are merged into, and as
// their own ten programs (Unmerge, as before merging); none is the call
// alone. ns/op is a getpriority call, the probes' work included.
func BenchmarkProbesOnOnePoint(b *testing.B) {
	var s strings.Builder
	for i := range 10 {
		fmt.Fprintf(&s, "tracepoint:raw_syscalls:sys_enter /pid == %d && args.id == %d/ { @c%d = count() }\n", os.Getpid(), unix.SYS_GETPRIORITY, i)
	}
	out := compile(b, s.String())
	merged := out.Programs[0]
	if merged.Probes() != 10 {
		b.Fatalf("%d probes in the first program, want 10", merged.Probes())
	}
	for _, c := range []struct {
		name  string
		progs []*codegen.Program
	}{{"none", nil}, {"merged", []*codegen.Program{merged}}, {"separate", merged.Unmerge()}} {
		b.Run(c.name, func(b *testing.B) {
			cs := &ebpf.CollectionSpec{Maps: out.Maps, Programs: map[string]*ebpf.ProgramSpec{}}
			for _, p := range c.progs {
				cs.Programs[p.Name] = p.Prog
			}
			coll, err := ebpf.NewCollection(cs)
			if err != nil {
				b.Fatal(err)
			}
			defer coll.Close()
			for _, p := range c.progs {
				l, err := link.AttachTracing(link.TracingOptions{Program: coll.Programs[p.Name], AttachType: ebpf.AttachTraceRawTp})
				if err != nil {
					b.Fatal(err)
				}
				defer l.Close()
			}
			for b.Loop() {
				unix.Getpriority(unix.PRIO_PROCESS, 0)
			}
			b.ReportMetric(float64(len(c.progs)), "programs")
		})
	}
}
