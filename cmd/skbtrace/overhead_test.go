package main

import (
	"fmt"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// runCLIWhile is runCLI for lines said while -c's command runs: into a
// bytes.Buffer the command's output is read (ReadFrom), which drops what
// others write meanwhile; image_test.go's lockedBuffer takes writes.
func runCLIWhile(args ...string) (code int, stdout, stderr string) {
	var out, errs lockedBuffer
	code = run(args, &out, &errs)
	return code, out.String(), errs.String()
}

// Run these under `flock /tmp/skbtrace-e2e.lock`: they send traffic in a
// namespace of their own and attach to the host's tracepoints.

// funcCounts reads `@[func]: N` lines of a map printed at exit.
func funcCounts(t *testing.T, out string) map[string]int {
	t.Helper()
	counts := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^@\[(\w+)\]: (\d+)$`).FindAllStringSubmatch(out, -1) {
		n, _ := strconv.Atoi(m[2])
		counts[m[1]] = n
	}
	return counts
}

// summaryCount reads a number the exit summary says, by the regexp's one
// group; -1 where the line is missing.
func summaryCount(errs, re string) int {
	m := regexp.MustCompile(re).FindStringSubmatch(errs)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// TestSampleKeepsWholePackets sends 400 datagrams to a closed port in a
// namespace of its own, traced by skb:* per function, without --sample and
// with --sample 4. Every function that every datagram passed unsampled
// is passed by the same number of datagrams sampled, about a quarter:
// a packet is kept with all its hops or not at all. The summary's kept
// and left-out packets add up to the datagrams sent.
func TestSampleKeepsWholePackets(t *testing.T) {
	const sent, port = 400, 4934
	ns := "skbtsmp"
	inum := netnsWithLo(t, ns)
	script := fmt.Sprintf(`skb:* /netns == %d && dport == %d/ { @[func] = count() }`, inum, port)
	send := "ip netns exec " + ns + " " + sendCommand(fmt.Sprintf("127.0.0.1:%d", port), sent, 10, 0)
	code, out, errs := runCLI(t, "-e", script, "-c", send)
	if code != 0 {
		t.Fatalf("unsampled: exit %d: %s", code, errs)
	}
	all := funcCounts(t, out)
	var every []string
	for fn, n := range all {
		if n == sent {
			every = append(every, fn)
		}
	}
	if len(every) < 3 {
		t.Fatalf("unsampled: fewer than 3 hops saw every datagram: %v\n%s", all, errs)
	}
	code, out, errs = runCLI(t, "--sample", "4", "-e", script, "-c", send)
	if code != 0 {
		t.Fatalf("--sample 4: exit %d: %s", code, errs)
	}
	sampled := funcCounts(t, out)
	kept := sampled[every[0]]
	for _, fn := range every {
		if sampled[fn] != kept {
			t.Errorf("--sample 4: %s saw %d datagrams, %s %d: a kept packet lost hops\nunsampled: %v\nsampled: %v", fn, sampled[fn], every[0], kept, all, sampled)
		}
	}
	for fn, n := range sampled {
		if n > all[fn] {
			t.Errorf("--sample 4: %s saw %d, more than unsampled (%d)", fn, n, all[fn])
		}
	}
	// A quarter of 400, binomial: 100 ± 8.7; 40 is more than four and a
	// half standard deviations.
	if kept < sent/4-40 || kept > sent/4+40 {
		t.Errorf("--sample 4 kept %d of %d datagrams, want about %d", kept, sent, sent/4)
	}
	sumKept := summaryCount(errs, `--sample: (\d+) packets? kept`)
	left := summaryCount(errs, `kept, (\d+) left out`)
	if sumKept != kept || sumKept+left != sent {
		t.Errorf("summary: %d kept + %d left out; want %d kept of %d:\n%s", sumKept, left, kept, sent, errs)
	}
	if out := summaryCount(errs, `(\d+) sampled out: --sample`); out < left*len(every) {
		t.Errorf("summary: %d events sampled out, want at least %d packets left out × %d hops:\n%s", out, left, len(every), errs)
	}
}

// TestMaxRateCaps drops 300 datagrams at once in a namespace of its own,
// printing a line for each at skb:kfree_skb with --max-rate 20: at most
// 20 a second per CPU are printed, and the printed and the capped the
// summary counts add up to the datagrams sent.
func TestMaxRateCaps(t *testing.T) {
	const sent, port, rate = 300, 4935, 20
	ns := "skbtrate"
	inum := netnsWithLo(t, ns)
	script := fmt.Sprintf(`skb:kfree_skb /netns == %d && dport == %d/ { printf("drop\n") }`, inum, port)
	send := "ip netns exec " + ns + " " + sendCommand(fmt.Sprintf("127.0.0.1:%d", port), sent, 10, 0)
	start := time.Now()
	code, out, errs := runCLI(t, "--max-rate", strconv.Itoa(rate), "-e", script, "-c", send)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	secs := int(time.Since(start)/time.Second) + 1
	printed := strings.Count(out, "drop\n")
	capped := summaryCount(errs, `(\d+) capped: --max-rate`)
	if printed+capped != sent {
		t.Errorf("printed %d + capped %d = %d, want the %d sent:\n%s", printed, capped, printed+capped, sent, errs)
	}
	if most := rate * runtime.NumCPU() * (secs + 1); printed < rate || printed > most {
		t.Errorf("printed %d in about %d s on %d CPUs at --max-rate %d", printed, secs, runtime.NumCPU(), rate)
	}
}

// TestSampleMetrics serves --sample 4's counts to a real Prometheus while
// 200 datagrams are dropped in a namespace of its own: the kept and the
// skipped packets sum to those sent, the kept are those the exit's map
// counted, the events sampled out are counted, and the programs' run time
// and runs are above zero.
func TestSampleMetrics(t *testing.T) {
	const sent, port = 200, 4936
	ns := "skbtsmet"
	inum := netnsWithLo(t, ns)
	addr := freePort(t)
	stdout := startCLI(t, "--metrics", addr, "--sample", "4", "-e", fmt.Sprintf(`skb:kfree_skb /netns == %d && dport == %d/ { @ = count() }`, inum, port))
	prom := startPrometheus(t, map[string]string{"a": addr})
	inNetns(t, ns, udpTo(port, sent))
	prom.waitQuery(`skbtrace_sample_kept_packets_total + skbtrace_sample_skipped_packets_total`, ": "+strconv.Itoa(sent))
	kept := prom.query(`skbtrace_sample_kept_packets_total`, 0)
	skipped := prom.query(`skbtrace_sampled_out_total`, 0)
	runs := prom.query(`skbtrace_program_runs_total`, 0)
	secs := prom.query(`skbtrace_program_run_seconds_total`, 0)
	one := prom.query(`skbtrace_sample_one_in`, 0)
	if len(kept) != 1 || len(skipped) != 1 || len(runs) != 1 || len(secs) != 1 || len(one) != 1 {
		t.Fatalf("series: kept %v, sampled out %v, runs %v, run seconds %v, one in %v", kept, skipped, runs, secs, one)
	}
	if one[0].value() != 4 || runs[0].value() < sent || secs[0].value() <= 0 {
		t.Errorf("sample one in %g, program runs %g (want at least %d), run seconds %g", one[0].value(), runs[0].value(), sent, secs[0].value())
	}
	if k := int(kept[0].value()); k < sent/4-35 || k > sent/4+35 || int(skipped[0].value()) != sent-k {
		t.Errorf("kept %d, sampled out %g events of %d datagrams (one hop each)", k, skipped[0].value(), sent)
	}
	out := stdout()
	if want := fmt.Sprintf("@: %d\n", int(kept[0].value())); !strings.Contains(out, want) {
		t.Errorf("the map at exit:\n%s\nwant %q: the kept packets Prometheus read", out, want)
	}
}

// TestMaxOverheadActs gives --max-overhead a budget no tracing fits in.
// With skb probes, skbtrace samples harder each second and says so; with
// none (sched_switch has no skb to sample), it detaches and says so, well
// before -c's command ends. --sample there says it samples nothing.
func TestMaxOverheadActs(t *testing.T) {
	const port = 4937
	ns := "skbtover"
	inum := netnsWithLo(t, ns)
	sender := sendCommand(fmt.Sprintf("127.0.0.1:%d", port), 2000, 10, 0)
	send := fmt.Sprintf("ip netns exec %s sh -c '%s; sleep 1.2; %s; sleep 1.2; %s'", ns, sender, sender, sender)
	script := fmt.Sprintf(`skb:* /netns == %d && dport == %d/ { @[func] = count() }`, inum, port)
	code, _, errs := runCLIWhile("--max-overhead", "0.000001", "-e", script, "-c", send)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "sampling harder: one packet in 2\n") {
		t.Errorf("no \"sampling harder\" on stderr:\n%s", errs)
	}
	start := time.Now()
	code, _, errs = runCLIWhile("--max-overhead", "0.000001", "-e", `tracepoint:sched:sched_switch { @ = count() }`, "-c", "sleep 10")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !regexp.MustCompile(`--max-overhead 1e-06%: the programs took [0-9.]+% of \d+ CPUs in the last 1s \(no probe has an skb to sample\); detaching\n`).MatchString(errs) {
		t.Errorf("no \"detaching\" on stderr:\n%s", errs)
	}
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("tracing went on for %s: it should have detached after a second or two", d)
	}
	code, _, errs = runCLI(t, "--sample", "3", "-e", `tracepoint:sched:sched_switch { @ = count() }`, "--duration", "100ms")
	if want := "skbtrace: --sample: no probe of the script has an skb: nothing is sampled\n"; code != 0 || !strings.Contains(errs, want) {
		t.Errorf("--sample without an skb probe: exit %d, stderr:\n%s\nwant %q", code, errs, want)
	}
}

// TestOverheadFlagErrors checks the flags' bad values: one line, exit 1.
func TestOverheadFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--sample", "-1"}, "skbtrace: --sample takes a number of packets from 1 to 1048576 (one in N is kept), not -1\n"},
		{[]string{"--max-rate", "-5"}, "skbtrace: --max-rate takes a number of events a second from 1 to 2147483647, not -5\n"},
		{[]string{"--max-overhead", "150"}, "skbtrace: --max-overhead takes a percentage of the CPUs above 0 and at most 100, not 150\n"},
		{[]string{"--sample", "x"}, "skbtrace: invalid argument \"x\" for \"--sample\" flag: must be an integer (see skbtrace -h)\n"},
	} {
		code, out, errs := runCLI(t, append(c.args, "-e", `skb:* { @ = count() }`)...)
		if code != 1 || out != "" || errs != c.want {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 1 and %q", c.args, code, out, errs, c.want)
		}
	}
}
