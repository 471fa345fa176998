// Command skbbench measures skbtrace against bpftrace on this machine, in
// one run, and writes the figures as Markdown: startup (launch to attached
// and back), event throughput with zero silent loss, per-packet overhead on
// a bounded loopback sender, and peak RSS. Compile times come from `go test
// -bench` (make bench runs both). Run it as root: bench/run.sh.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// result is one measured run of a command.
type result struct {
	wall   time.Duration
	rssKB  int64
	stdout string
	stderr string
}

// measure runs a command to its end and returns its wall time, peak RSS,
// and output.
func measure(name string, args ...string) (result, error) {
	cmd := exec.Command(name, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return result{}, err
	}
	// The peak RSS is the last VmHWM seen: wait4's ru_maxrss also counts
	// what the process was before exec, which here is this program.
	done := make(chan int64)
	go func() {
		var hwm int64
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			if v := vmHWM(cmd.Process.Pid); v > hwm {
				hwm = v
			}
			select {
			case <-t.C:
			case <-done:
				done <- hwm
				return
			}
		}
	}()
	err := cmd.Wait()
	done <- 0
	r := result{wall: time.Since(start), stdout: out.String(), stderr: errb.String(), rssKB: <-done}
	if err != nil {
		return r, fmt.Errorf("%s %v: %v: %s", name, args, err, errb.String())
	}
	return r, nil
}

// median runs f n times and returns the run with the median wall time.
func median(n int, f func() (result, error)) (result, error) {
	var rs []result
	for range n {
		r, err := f()
		if err != nil {
			return r, err
		}
		rs = append(rs, r)
	}
	slices.SortFunc(rs, func(a, b result) int { return int(a.wall - b.wall) })
	return rs[len(rs)/2], nil
}

// vmHWM reads a process's peak resident set size in KiB, 0 if it is gone.
func vmHWM(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

func closedPort() int {
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer pc.Close()
	return pc.LocalAddr().(*net.UDPAddr).Port
}

var ppsRe = regexp.MustCompile(`: (\d+) pps`)

func pps(out string) float64 {
	m := ppsRe.FindStringSubmatch(out)
	if m == nil {
		return 0
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

func main() {
	skbtrace := flag.String("skbtrace", "./skbtrace", "the skbtrace binary")
	bpftrace := flag.String("bpftrace", "bpftrace", "the bpftrace binary")
	flood := flag.String("udpflood", "./udpflood", "the udpflood binary")
	runs := flag.Int("runs", 10, "runs per startup measurement (the median is kept)")
	packets := flag.Int("packets", 300000, "datagrams per throughput and overhead run")
	out := flag.String("o", "", "write the Markdown here (default stdout)")
	compile := flag.String("compile", "", "a file with `go test -bench` output for the compile table")
	flag.Parse()
	var w io.Writer = os.Stdout
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			fail(err)
		}
		defer f.Close()
		w = f
	}
	bpfVersion := "absent"
	if r, err := measure(*bpftrace, "--version"); err == nil {
		bpfVersion = strings.TrimSpace(r.stdout)
	}
	haveBpftrace := bpfVersion != "absent"

	var uts syscall.Utsname
	syscall.Uname(&uts)
	fmt.Fprintf(w, "# skbtrace benchmark results\n\n")
	fmt.Fprintf(w, "Measured %s on Linux %s, %d CPUs, %s; bpftrace: %s.\n",
		time.Now().UTC().Format("2006-01-02"), utsString(uts.Release[:]), runtime.NumCPU(), cpuModel(), bpfVersion)
	fmt.Fprintf(w, "Rerun with `make bench` (as root). Every figure below comes from that one run.\n\n")

	if *compile != "" {
		b, err := os.ReadFile(*compile)
		if err != nil {
			fail(err)
		}
		fmt.Fprintf(w, "## Compile time (parse, check against BTF, generate eBPF)\n\n| script | time | instructions |\n|---|---|---|\n")
		re := regexp.MustCompile(`(?m)^Benchmark(\S+?)(?:-\d+)?\s+\d+\s+(\d+) ns/op\s+([\d.]+) insns`)
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			ns, _ := strconv.ParseFloat(m[2], 64)
			insns, _ := strconv.ParseFloat(m[3], 64)
			fmt.Fprintf(w, "| %s | %.2f ms | %.0f |\n", m[1], ns/1e6, insns)
		}
		fmt.Fprintln(w)
	}

	// Startup: launch, attach a tracepoint probe, run BEGIN, which exits,
	// detach. Both tools do the same work.
	fmt.Fprintf(w, "## Startup: a tracepoint one-liner, launch to attached and back (median of %d)\n\n", *runs)
	fmt.Fprintf(w, "| tool | wall time | peak RSS |\n|---|---|---|\n")
	st, err := median(*runs, func() (result, error) {
		return measure(*skbtrace, "-e", `tracepoint:skb:kfree_skb { @[reason] = count() } BEGIN { exit() }`)
	})
	if err != nil {
		fail(err)
	}
	fmt.Fprintf(w, "| skbtrace | %v | %d MiB |\n", st.wall.Round(time.Millisecond), st.rssKB>>10)
	var bt result
	if haveBpftrace {
		bt, err = median(*runs, func() (result, error) {
			return measure(*bpftrace, "-e", `tracepoint:skb:kfree_skb { @[args->reason] = count(); } BEGIN { exit(); }`)
		})
		if err != nil {
			fail(err)
		}
		fmt.Fprintf(w, "| bpftrace | %v | %d MiB |\n", bt.wall.Round(time.Millisecond), bt.rssKB>>10)
		fmt.Fprintf(w, "\nskbtrace starts **%.1fx** faster than bpftrace.\n", float64(bt.wall)/float64(st.wall))
	}
	fmt.Fprintln(w)

	// Throughput: one printf per packet, to /dev/null, text and JSON.
	fmt.Fprintf(w, "## Event throughput: one event per packet, printed to /dev/null (%d packets)\n\n", *packets)
	fmt.Fprintf(w, "| tool | output | events/s | printed | reported lost | peak RSS |\n|---|---|---|---|---|---|\n")
	for _, format := range []string{"text", "json"} {
		port := closedPort()
		send := fmt.Sprintf("%s -n %d -port %d", *flood, *packets, port)
		r, err := measure(*skbtrace, "-f", format, "-o", "/dev/null", "-c", send,
			"-e", fmt.Sprintf(`tracepoint:skb:kfree_skb /dport == %d/ { printf("%%u %%s\n", len, comm) }`, port))
		if err != nil {
			fail(err)
		}
		lost := lostCount(r.stderr, `skbtrace: (\d+) events lost`)
		fmt.Fprintf(w, "| skbtrace | %s | %.0f | %d | %d | %d MiB |\n", format,
			float64(*packets)/(r.wall-st.wall).Seconds(), *packets-lost, lost, r.rssKB>>10)
	}
	if haveBpftrace {
		port := closedPort()
		send := fmt.Sprintf("%s -n %d -port %d", *flood, *packets, port)
		// bpftrace's kfree_skb tracepoint has no port: count its events by
		// the sender's process name instead.
		r, err := measure(*bpftrace, "-c", send, "-e", `tracepoint:skb:kfree_skb /comm == "udpflood"/ { printf("%p %s\n", args->skbaddr, comm); }`)
		if err != nil {
			fail(err)
		}
		printed := strings.Count(r.stdout, " udpflood\n")
		lost := lostCount(r.stdout+r.stderr, `Lost (\d+) events`)
		fmt.Fprintf(w, "| bpftrace | text | %.0f | %d | %d | %d MiB |\n", float64(*packets)/(r.wall-bt.wall).Seconds(), printed, lost, r.rssKB>>10)
	}
	fmt.Fprintf(w, "\nevents/s is packets over the run's wall time less the median startup. skbtrace's output goes to /dev/null, so its printed count is the packets sent less the loss it reported; bpftrace's is counted.\n\n")

	// Overhead: the sender's own rate, untraced and traced.
	fmt.Fprintf(w, "## Overhead: a loopback UDP sender's rate (%d packets, median of 3)\n\n", *packets)
	fmt.Fprintf(w, "| tracing | packets/s | cost per packet | tracer peak RSS |\n|---|---|---|---|\n")
	port := closedPort()
	send := []string{"-n", strconv.Itoa(*packets), "-port", strconv.Itoa(port)}
	base, err := median(3, func() (result, error) { return measure(*flood, send...) })
	if err != nil {
		fail(err)
	}
	basePPS := pps(base.stdout)
	fmt.Fprintf(w, "| none | %.0f | - | - |\n", basePPS)
	sendCmd := *flood + " " + strings.Join(send, " ")
	row := func(name string, run func() (result, error)) {
		r, err := median(3, run)
		if err != nil {
			fail(err)
		}
		p := pps(r.stdout + r.stderr)
		cost := time.Duration(float64(time.Second)/p - float64(time.Second)/basePPS)
		fmt.Fprintf(w, "| %s | %.0f | %v | %d MiB |\n", name, p, cost.Round(10*time.Nanosecond), r.rssKB>>10)
	}
	row("skbtrace `@[reason] = count()` on kfree_skb", func() (result, error) {
		return measure(*skbtrace, "-c", sendCmd, "-e", `tracepoint:skb:kfree_skb { @[reason] = count() }`)
	})
	if haveBpftrace {
		row("bpftrace `@[args->reason] = count()` on kfree_skb", func() (result, error) {
			return measure(*bpftrace, "-c", sendCmd, "-e", `tracepoint:skb:kfree_skb { @[args->reason] = count(); }`)
		})
	}
	fmt.Fprintln(w)
}

func lostCount(s, pattern string) int {
	n := 0
	for _, m := range regexp.MustCompile(pattern).FindAllStringSubmatch(s, -1) {
		v, _ := strconv.Atoi(m[1])
		n += v
	}
	return n
}

func utsString(b []int8) string {
	var s []byte
	for _, c := range b {
		if c == 0 {
			break
		}
		s = append(s, byte(c))
	}
	return string(s)
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "skbbench:", err)
	os.Exit(1)
}
