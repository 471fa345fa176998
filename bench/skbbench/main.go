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
	var out bytes.Buffer
	r, err := measureTo(&out, name, args...)
	r.stdout = out.String()
	return r, err
}

// measureTo is measure with the command's stdout going to w.
func measureTo(stdout io.Writer, name string, args ...string) (result, error) {
	cmd := exec.Command(name, args...)
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = stdout, &errb
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return result{}, err
	}
	done := make(chan int64)
	go func() { done <- peakRSS(cmd.Process.Pid, done) }()
	err := cmd.Wait()
	done <- 0
	r := result{wall: time.Since(start), stderr: errb.String(), rssKB: <-done}
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

// peakRSS polls a process's peak RSS until stop receives, and returns
// the last seen: wait4's ru_maxrss also counts what the process was before
// exec, which here is this program.
func peakRSS(pid int, stop <-chan int64) int64 {
	var hwm int64
	t := time.NewTicker(2 * time.Millisecond)
	defer t.Stop()
	for {
		if v := vmHWM(pid); v > hwm {
			hwm = v
		}
		select {
		case <-t.C:
		case <-stop:
			return hwm
		}
	}
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
	commit := flag.String("commit", "unknown", "the commit measured")
	only := flag.String("only", "", "run only this section: overhead (the sender's rate traced, -w's cost included) sizes (program sizes) or names (the pod filter's and names' cost per packet)")
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
	fmt.Fprintf(w, "Measured %s at commit %s on Linux %s, %d CPUs, %s; bpftrace: %s.\n",
		time.Now().UTC().Format("2006-01-02"), *commit, utsString(uts.Release[:]), runtime.NumCPU(), cpuModel(), bpfVersion)
	fmt.Fprintf(w, "Rerun with `make bench` (as root). Every figure below comes from that one run.\n\n")
	switch *only {
	case "overhead":
		overhead(w, *skbtrace, *bpftrace, *flood, *packets, haveBpftrace)
		return
	case "sizes":
		sizes(w, *skbtrace, *bpftrace, haveBpftrace)
		return
	case "names":
		namesPrograms(w, *skbtrace, *flood, *packets)
		fmt.Fprintln(w)
		namesOverhead(w, *skbtrace, *flood, *packets)
		return
	}

	if *compile != "" {
		b, err := os.ReadFile(*compile)
		if err != nil {
			fail(err)
		}
		fmt.Fprintf(w, "## Compile time (parse, check against BTF, generate eBPF)\n\n| script | time | instructions | time per MB of script |\n|---|---|---|---|\n")
		re := regexp.MustCompile(`(?m)^Benchmark(\S+?)(?:-\d+)?\s+\d+\s+(\d+) ns/op\s+(?:([\d.]+) MB/s\s+)?([\d.]+) insns`)
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			ns, _ := strconv.ParseFloat(m[2], 64)
			insns, _ := strconv.ParseFloat(m[4], 64)
			perMB := "-"
			if mbs, _ := strconv.ParseFloat(m[3], 64); mbs > 0 {
				perMB = fmt.Sprintf("%.2f s", 1/mbs)
			}
			fmt.Fprintf(w, "| %s | %.2f ms | %.0f | %s |\n", m[1], ns/1e6, insns, perMB)
		}
		fmt.Fprintln(w)
	}

	// Startup: launch, attach a tracepoint probe, run a command that exits
	// at once, detach. Both tools do the same work.
	fmt.Fprintf(w, "## Startup: a tracepoint one-liner with `-c /bin/true`, launch to attached and back (median of %d)\n\n", *runs)
	fmt.Fprintf(w, "| tool | wall time | peak RSS |\n|---|---|---|\n")
	st, err := median(*runs, func() (result, error) {
		return measure(*skbtrace, "-c", "/bin/true", "-e", `tracepoint:skb:kfree_skb { @[reason] = count() }`)
	})
	if err != nil {
		fail(err)
	}
	fmt.Fprintf(w, "| skbtrace | %v | %d MiB |\n", st.wall.Round(time.Millisecond), st.rssKB>>10)
	if haveBpftrace {
		bt, err := median(*runs, func() (result, error) {
			return measure(*bpftrace, "-c", "/bin/true", "-e", `tracepoint:skb:kfree_skb { @[args->reason] = count(); }`)
		})
		if err != nil {
			fail(err)
		}
		fmt.Fprintf(w, "| bpftrace | %v | %d MiB |\n", bt.wall.Round(time.Millisecond), bt.rssKB>>10)
		fmt.Fprintf(w, "\nskbtrace starts **%.1fx** faster than bpftrace (goal: under 25 ms, 15x).\n", float64(bt.wall)/float64(st.wall))
	}
	fmt.Fprintln(w)

	throughput(w, *skbtrace, *bpftrace, *flood, *packets, haveBpftrace)
	sizes(w, *skbtrace, *bpftrace, haveBpftrace)

	overhead(w, *skbtrace, *bpftrace, *flood, *packets, haveBpftrace)
}

// overhead is the sender's own rate, untraced and traced: small datagrams
// with a count and with -w at both snap lengths, then datagrams large
// enough that the kernel builds them paged, where -w's whole packet copies
// the fragments.
func overhead(w io.Writer, skbtrace, bpftrace, flood string, packets int, haveBpftrace bool) {
	fmt.Fprintf(w, "## Overhead: a loopback UDP sender's rate (%d packets, median of 3)\n\n", packets)
	fmt.Fprintf(w, "| tracing | packets/s | cost per packet | tracer peak RSS |\n|---|---|---|---|\n")
	table := func(size, packets int, rows func(row func(name string, args ...string))) {
		port := closedPort()
		send := []string{"-n", strconv.Itoa(packets), "-port", strconv.Itoa(port), "-size", strconv.Itoa(size)}
		base, err := median(3, func() (result, error) { return measure(flood, send...) })
		if err != nil {
			fail(err)
		}
		basePPS := pps(base.stdout)
		fmt.Fprintf(w, "| none | %.0f | - | - |\n", basePPS)
		sendCmd := flood + " " + strings.Join(send, " ")
		rows(func(name string, args ...string) {
			tool := skbtrace
			if strings.HasPrefix(name, "bpftrace") {
				tool = bpftrace
			}
			r, err := median(3, func() (result, error) { return measure(tool, append([]string{"-c", sendCmd}, args...)...) })
			if err != nil {
				fail(err)
			}
			p := pps(r.stdout + r.stderr)
			cost := time.Duration(float64(time.Second)/p - float64(time.Second)/basePPS)
			if lost := lostCount(r.stderr, `skbtrace: (\d+) events lost`); lost > 0 {
				name += fmt.Sprintf(" (%d events lost)", lost)
			}
			fmt.Fprintf(w, "| %s | %.0f | %v | %d MiB |\n", name, p, cost.Round(10*time.Nanosecond), r.rssKB>>10)
		})
	}
	table(5, packets, func(row func(string, ...string)) {
		row("skbtrace `@[reason] = count()` on kfree_skb", "-e", `tracepoint:skb:kfree_skb { @[reason] = count() }`)
		// The tools that count drops: dropcount's six keys, scraped or not.
		row("skbtrace dropwatch", "dropwatch")
		row("skbtrace dropcount", "dropcount")
		row("skbtrace `--metrics 127.0.0.1:0` dropcount", "--metrics", "127.0.0.1:0", "dropcount")
		// -w: a pcapng frame of every drop.
		row("skbtrace `-w /dev/null` (snaplen 256) on kfree_skb", "-w", "/dev/null", "-e", `tracepoint:skb:kfree_skb { }`)
		row("skbtrace `-w /dev/null --snaplen 0` on kfree_skb", "-w", "/dev/null", "--snaplen", "0", "-e", `tracepoint:skb:kfree_skb { }`)
		if haveBpftrace {
			row("bpftrace `@[args->reason] = count()` on kfree_skb", "-e", `tracepoint:skb:kfree_skb { @[args->reason] = count(); }`)
		}
	})
	fmt.Fprintf(w, "\nWith 32,000-byte datagrams (%d), which the kernel builds paged (a linear head, the payload in page fragments):\n\n", packets/10)
	fmt.Fprintf(w, "| tracing | packets/s | cost per packet | tracer peak RSS |\n|---|---|---|---|\n")
	table(32000, packets/10, func(row func(string, ...string)) {
		row("skbtrace `-w /dev/null` (snaplen 256) on kfree_skb", "-w", "/dev/null", "-e", `tracepoint:skb:kfree_skb { }`)
		row("skbtrace `-w /dev/null --snaplen 0` on kfree_skb", "-w", "/dev/null", "--snaplen", "0", "-e", `tracepoint:skb:kfree_skb { }`)
		// Whole 32 KB frames outrun the default 4 MiB ring buffer.
		row("skbtrace `-w /dev/null --snaplen 0 --buffer-size 64M` on kfree_skb", "-w", "/dev/null", "--snaplen", "0", "--buffer-size", "64M", "-e", `tracepoint:skb:kfree_skb { }`)
	})
	fmt.Fprintln(w)
}

// throughput floods both tools with events and counts the lines they
// print: one event per packet on kfree_skb, then skbtrace's skb:* in a
// namespace, about eight events per packet.
func throughput(w io.Writer, skbtrace, bpftrace, flood string, packets int, haveBpftrace bool) {
	fmt.Fprintf(w, "## Event throughput: lines actually printed (to a pipe that counts them), events per second of sending\n\n")
	fmt.Fprintf(w, "| tool | probes | output | packets | lines printed | events/s | reported lost | peak RSS |\n|---|---|---|---|---|---|---|---|\n")
	for _, format := range []string{"text", "json"} {
		port := closedPort()
		var counter lineCounter
		r, err := measureTo(&counter, skbtrace, "-f", format, "-c", fmt.Sprintf("%s -n %d -port %d", flood, packets, port),
			"-e", fmt.Sprintf(`tracepoint:skb:kfree_skb /dport == %d/ { printf("%%u %%s\n", len, comm) }`, port))
		if err != nil {
			fail(err)
		}
		sendRow(w, "skbtrace", "kfree_skb", format, counter.lines, r.stderr, lostCount(r.stderr, `skbtrace: (\d+) events lost`), r.rssKB)
	}
	if haveBpftrace {
		port := closedPort()
		// bpftrace's kfree_skb tracepoint has no port: its events are the
		// sender's, by process name.
		r, err := measure(bpftrace, "-c", fmt.Sprintf("%s -n %d -port %d", flood, packets, port),
			"-e", `tracepoint:skb:kfree_skb /comm == "udpflood"/ { printf("%p %s\n", args->skbaddr, comm); }`)
		if err != nil {
			fail(err)
		}
		sendRow(w, "bpftrace", "kfree_skb", "text", strings.Count(r.stdout, " udpflood\n"), r.stdout+r.stderr,
			lostCount(r.stdout+r.stderr, `Lost (\d+) events`), r.rssKB)
	}
	for _, format := range []string{"text", "json"} {
		f, err := netnsFlood(skbtrace, flood, format, packets/2)
		if err != nil {
			fail(err)
		}
		fmt.Fprintf(w, "| skbtrace | skb:* (%.1f a packet) | %s | %d | %d | %.0f | %d | %d MiB |\n", float64(f.lines+f.lost)/float64(f.sent),
			format, f.sent, f.lines, float64(f.lines)/f.sendTime.Seconds(), f.lost, f.rssKB>>10)
	}
	fmt.Fprintf(w, "\nevents/s is lines printed over the time the sender took (goal: 1,000,000 text, 500,000 JSON, 0 lost). "+
		"The sender's rate bounds it: the tracer can print no faster than the kernel makes events, and both share the machine's CPUs.\n\n")
}

// sendRow prints a throughput row from the sender's own report.
func sendRow(w io.Writer, tool, probes, format string, lines int, out string, lost int, rssKB int64) {
	m := sentRe.FindStringSubmatch(out)
	if m == nil {
		fail(fmt.Errorf("%s: no sender report in %q", tool, out))
	}
	sent, _ := strconv.Atoi(m[1])
	d, _ := time.ParseDuration(m[2])
	fmt.Fprintf(w, "| %s | %s | %s | %d | %d | %.0f | %d | %d MiB |\n", tool, probes, format, sent, lines, float64(lines)/d.Seconds(), lost, rssKB>>10)
}

// sizes compares the programs the kernel holds for the same script, and
// whether many maps in one probe load.
func sizes(w io.Writer, skbtrace, bpftrace string, haveBpftrace bool) {
	fmt.Fprintf(w, "## Program size: instructions after the kernel's rewrites (xlated), and instructions the verifier processed\n\n")
	fmt.Fprintf(w, "| program | skbtrace | bpftrace |\n|---|---|---|\n")
	for _, r := range sizeRows {
		st := cell(attachedSize(skbtrace, "-e", r.skbtrace))
		bt := "-"
		if haveBpftrace {
			bt = cell(attachedSize(bpftrace, "-e", r.bpftrace))
		}
		fmt.Fprintf(w, "| %s | %s | %s |\n", r.what, st, bt)
	}
	for _, n := range []int{40, 200} {
		var s, b strings.Builder
		for i := range n {
			fmt.Fprintf(&s, "@m%d = count(); ", i)
			fmt.Fprintf(&b, "@m%d = count(); ", i)
		}
		st := loads(skbtrace, "tracepoint:skb:kfree_skb { "+s.String()+"}")
		bt := "-"
		if haveBpftrace {
			bt = loads(bpftrace, "tracepoint:skb:kfree_skb { "+b.String()+"}")
		}
		fmt.Fprintf(w, "| %d `@mN = count()` in one probe | %s | %s |\n", n, st, bt)
	}
	fmt.Fprintln(w)
}

// loads says whether a tool loads and attaches a script.
func loads(tool, script string) string {
	r, err := measure(tool, "-c", "/bin/true", "-e", script)
	if err != nil {
		// The last line: bpftrace warns about RLIMIT_MEMLOCK first.
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		line := lines[len(lines)-1]
		return "fails: " + strings.ReplaceAll(line, "|", "\\|")
	}
	return "loads"
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
