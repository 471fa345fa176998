package names

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// BenchmarkRefresh is the resolver's own cost: one Refresh (every source
// asked: the CRI, /proc, the cgroup2 tree, podman's and Docker's stores,
// /run/netns, the host's veths) against this host as it is, with three ip
// netns added for the run where it is root. Besides ns/op (wall time) it
// reports the process' CPU time per refresh (user and system, from
// getrusage: I/O waits excluded, the collector's work included) and what
// that is, in percent of one CPU, at the default 1 s poll.
func BenchmarkRefresh(b *testing.B) {
	added := 0
	if os.Geteuid() == 0 {
		if _, err := exec.LookPath("ip"); err == nil {
			for i := range 3 {
				name := fmt.Sprintf("skbrb%d-%d", i, os.Getpid())
				exec.Command("ip", "netns", "del", name).Run()
				if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
					b.Fatalf("ip netns add %s: %v\n%s", name, err, out)
				}
				b.Cleanup(func() { exec.Command("ip", "netns", "del", name).Run() })
				added++
			}
		}
	}
	b.Run("host", func(b *testing.B) { benchRefresh(b, added) })
	// 500 more processes (sleep, in the host's namespace): /proc's scan
	// is per process.
	var procs []*exec.Cmd
	defer func() {
		for _, c := range procs {
			c.Process.Kill()
			c.Wait()
		}
	}()
	for range 500 {
		c := exec.Command("sleep", "600")
		if err := c.Start(); err != nil {
			b.Fatal(err)
		}
		procs = append(procs, c)
	}
	b.Run("host+500procs", func(b *testing.B) { benchRefresh(b, added) })
}

func benchRefresh(b *testing.B, added int) {
	r := New(Options{})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := r.Refresh(ctx); err != nil { // the CRI's first dial, warnings
		b.Fatal(err)
	}
	b.Logf("ip netns added: %d; status: %q", added, r.Status())
	var before, after unix.Rusage
	b.ReportAllocs()
	unix.Getrusage(unix.RUSAGE_SELF, &before)
	n := 0
	for b.Loop() {
		if err := r.Refresh(ctx); err != nil {
			b.Fatal(err)
		}
		n++
	}
	unix.Getrusage(unix.RUSAGE_SELF, &after)
	cpu := time.Duration(after.Utime.Nano()-before.Utime.Nano()) + time.Duration(after.Stime.Nano()-before.Stime.Nano())
	perRefresh := float64(cpu.Nanoseconds()) / float64(n)
	b.ReportMetric(perRefresh, "cpu-ns/op")
	b.ReportMetric(perRefresh/float64(time.Second)*100, "%cpu@1s")
}
