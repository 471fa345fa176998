package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// namesNetns are the namespaces the pod filter's rows choose: this one
// (the sender's, an inode) and an empty ip netns made for them (a name);
// done deletes the latter.
func namesNetns() (host, other string, done func()) {
	var st syscall.Stat_t
	if err := syscall.Stat("/proc/self/ns/net", &st); err != nil {
		fail(err)
	}
	other = fmt.Sprintf("skbbench-names-%d", os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", other).CombinedOutput(); err != nil {
		fail(fmt.Errorf("ip netns add %s: %v: %s", other, err, out))
	}
	return strconv.FormatUint(st.Ino, 10), other, func() { exec.Command("ip", "netns", "del", other).Run() }
}

// namesOverhead is the pod filter's cost per packet on this host's
// backend: the loopback sender's rate untraced, traced by a count on
// kfree_skb alone, with --netns of the sender's namespace (every packet
// passes the scope test, then counts) and with --netns of an empty ip
// netns (every packet fails it: the test alone). Then, with a print of the
// device, namespace and address to a pipe, --names=false against --names.
func namesOverhead(w io.Writer, skbtrace, flood string, packets int) {
	host, other, done := namesNetns()
	defer done()

	fmt.Fprintf(w, "| tracing (tracepoint:skb:kfree_skb) | packets/s | cost per packet | against the row above |\n|---|---|---|---|\n")
	port := closedPort()
	send := []string{"-n", strconv.Itoa(packets), "-port", strconv.Itoa(port), "-size", "5"}
	base, err := median(3, func() (result, error) { return measure(flood, send...) })
	if err != nil {
		fail(err)
	}
	basePPS := pps(base.stdout)
	fmt.Fprintf(w, "| none | %.0f | - | - |\n", basePPS)
	sendCmd := flood + " " + strings.Join(send, " ")
	prev := basePPS
	row := func(name string, args ...string) {
		r, err := median(3, func() (result, error) {
			return measure(skbtrace, append([]string{"-c", sendCmd}, args...)...)
		})
		if err != nil {
			fail(err)
		}
		p := pps(r.stdout + r.stderr)
		cost := time.Duration(float64(time.Second)/p - float64(time.Second)/basePPS)
		delta := time.Duration(float64(time.Second)/p - float64(time.Second)/prev)
		if lost := lostCount(r.stderr, `skbtrace: (\d+) events lost`); lost > 0 {
			name += fmt.Sprintf(" (%d events lost)", lost)
		}
		fmt.Fprintf(w, "| %s | %.0f | %v | %v |\n", name, p, cost.Round(10*time.Nanosecond), delta.Round(10*time.Nanosecond))
		prev = p
	}
	count := `tracepoint:skb:kfree_skb { @[reason] = count() }`
	row("`@[reason] = count()`", "-e", count)
	row("the same, `--netns` the sender's (test passes)", "--netns", host, "-e", count)
	row("the same, `--netns` an empty ip netns (test fails)", "--netns", other, "-e", count)
	print := `tracepoint:skb:kfree_skb { print(dev, netns, saddr, len) }`
	prev = basePPS
	row("`print(dev, netns, saddr, len)` `--names=false`", "--names=false", "-e", print)
	row("the same, `--names`", "--names", "-e", print)
}

// progRun is a loaded program's size and what the kernel counted of its
// runs (BPF_STATS_RUN_TIME).
type progRun struct {
	progSize
	runs uint64
	ns   time.Duration
}

// runStats runs skbtrace until it is tracing, sends packets with the
// sender, and reads the run count and run time of its largest program:
// the program's own cost per packet, in the kernel's clock.
func runStats(skbtrace, sendCmd string, args ...string) (progRun, error) {
	before := lastProgID()
	r, err := startTool(skbtrace, false, "/bin/sleep 30", args...)
	if err != nil {
		return progRun{}, err
	}
	defer r.stop()
	if err := r.until(func(out string) bool { return strings.Contains(out, "tracing ") }); err != nil {
		return progRun{}, err
	}
	best := progRun{progSize: largest(progsAfter(before))}
	if best.xlated == 0 {
		return progRun{}, fmt.Errorf("skbtrace %v: no program loaded", args)
	}
	prog, err := ebpf.NewProgramFromID(best.id)
	if err != nil {
		return progRun{}, fmt.Errorf("skbtrace %v: program %d: %w", args, best.id, err)
	}
	defer prog.Close()
	s0, err := prog.Stats()
	if err != nil {
		return progRun{}, err
	}
	f := strings.Fields(sendCmd)
	if o, err := exec.Command(f[0], f[1:]...).CombinedOutput(); err != nil {
		return progRun{}, fmt.Errorf("%s: %v: %s", sendCmd, err, o)
	}
	s1, err := prog.Stats()
	if err != nil {
		return progRun{}, err
	}
	best.runs, best.ns = s1.RunCount-s0.RunCount, s1.Runtime-s0.Runtime
	return best, nil
}

// namesPrograms is the table of the programs themselves: xlated size and
// the kernel's run time per run (BPF stats on for the measurement), the
// pod filter's test against none, and --names against --names=false.
func namesPrograms(w io.Writer, skbtrace, flood string, packets int) {
	host, other, done := namesNetns()
	defer done()
	stats, err := ebpf.EnableStats(uint32(unix.BPF_STATS_RUN_TIME))
	if err != nil {
		fail(fmt.Errorf("enabling BPF run-time statistics: %w", err))
	}
	defer stats.Close()
	sendCmd := fmt.Sprintf("%s -n %d -port %d -size 5", flood, packets, closedPort())
	fmt.Fprintf(w, "| program (tracepoint:skb:kfree_skb) | xlated instructions | verifier processed | runs | ns per run (median of 3) |\n|---|---|---|---|---|\n")
	row := func(name string, args ...string) {
		var rs []progRun
		for range 3 {
			r, err := runStats(skbtrace, sendCmd, args...)
			if err != nil {
				fail(err)
			}
			rs = append(rs, r)
		}
		per := func(r progRun) float64 { return float64(r.ns) / float64(max(r.runs, 1)) }
		slices.SortFunc(rs, func(a, b progRun) int { return int(per(a) - per(b)) })
		r := rs[1]
		fmt.Fprintf(w, "| %s | %d | %d | %d | %.0f |\n", name, r.xlated, r.verified, r.runs, per(r))
	}
	count := `tracepoint:skb:kfree_skb { @[reason] = count() }`
	row("`@[reason] = count()`", "-e", count)
	row("the same, `--netns` the sender's (test passes)", "--netns", host, "-e", count)
	row("the same, `--netns` an empty ip netns (test fails)", "--netns", other, "-e", count)
	print := `tracepoint:skb:kfree_skb { print(dev, netns, saddr, len) }`
	row("`print(dev, netns, saddr, len)` `--names=false`", "--names=false", "-e", print)
	row("the same, `--names`", "--names", "-e", print)
	row("the same, `--names --netns` the sender's", "--names", "--netns", host, "-e", print)
}
