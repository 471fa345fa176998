package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// run is what one case's command did.
type run struct {
	Stdout, Stderr []string
	Exit           int           // -1: killed at the case's timeout
	Tracing        time.Duration // start to the "tracing" line; 0: never said
	Stop           time.Duration // signal (or end of traffic) to exit
	Teardown       time.Duration // exit to the end of skbtrace's detach helper; 0: none ran
	First          time.Duration // the traffic's start to skbtrace's first line on stdout; 0: none
	Total          time.Duration
	Problems       []string // traffic failures, timeouts, leaks
	Notes          []string // the traffic's own output
}

var (
	// skbtrace's line, or bpftrace 0.26's for a bpftrace program.
	tracingLine = regexp.MustCompile(`^(skbtrace: tracing \d+ probes?; |Attached \d+ probes?$)`)
	// A progressive start says which functions attached first, and once
	// the others have too.
	partLine = regexp.MustCompile(`^skbtrace: .* attach while tracing$`)
	allLine  = regexp.MustCompile(`^skbtrace: \d+ functions attached with \S+ in .*more while tracing\)$`)
)

// saysTracing reports whether skbtrace said it is tracing.
func saysTracing(lines []string) bool {
	for _, l := range lines {
		if tracingLine.MatchString(l) {
			return true
		}
	}
	return false
}

// hasTracing reports whether skbtrace said it is tracing with every probe
// attached: with a progressive start, once the rest attached too (cases
// assert what every function saw; bench/vm/filter.sh times both).
func hasTracing(lines []string) bool {
	tracing, part, all := false, false, false
	for _, l := range lines {
		tracing = tracing || tracingLine.MatchString(l)
		part = part || partLine.MatchString(l)
		all = all || allLine.MatchString(l)
	}
	return tracing && (!part || all)
}

// execute runs the case's command with its traffic and signal, and then waits
// for the kernel to hold no more than it held before.
func (c *testCase) execute() *run {
	r := &run{}
	if c.Setup != "" {
		if out, err := exec.Command("sh", "-c", c.Setup).CombinedOutput(); err != nil {
			r.Problems = append(r.Problems, fmt.Sprintf("setup %q: %v: %s", c.Setup, err, out))
			return r
		}
	}
	before := readKernelState()
	start := time.Now()
	deadline := start.Add(c.Timeout)
	cmd := exec.Command("sh", "-c", "exec "+c.Run)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	outR, _ := cmd.StdoutPipe()
	errR, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		r.Problems = append(r.Problems, fmt.Sprintf("start: %v", err))
		return r
	}
	stdout, stderr := newLineLog(), newLineLog()
	var readers sync.WaitGroup
	readers.Add(2)
	go func() { defer readers.Done(); stdout.fill(outR) }()
	go func() { defer readers.Done(); stderr.fill(errR) }()
	done := make(chan struct{})
	go func() { readers.Wait(); cmd.Wait(); close(done) }()

	stopAt := time.Time{}
	if c.Traffic != "" {
		ready := hasTracing
		if c.Early {
			ready = saysTracing
		}
		if stderr.waitFor(ready, done, deadline) {
			r.Tracing = time.Since(start)
			sent := time.Now()
			r.traffic(c.Traffic, deadline)
			defer func() {
				if at := stdout.firstAt(); at.After(sent) {
					r.First = at.Sub(sent)
				}
			}()
			if c.Until != nil {
				u := c.Until
				if !stdout.waitFor(func(l []string) bool { return countMatches(l, u.Re) >= u.N }, done, deadline) {
					r.Problems = append(r.Problems, fmt.Sprintf("until /%s/ %d: only %d lines before it ended or timed out",
						u.Re, u.N, countMatches(stdout.snapshot(), u.Re)))
				}
			}
			stopAt = time.Now()
			if c.Signal != "" {
				sig := map[string]syscall.Signal{"INT": syscall.SIGINT, "TERM": syscall.SIGTERM}[c.Signal]
				syscall.Kill(cmd.Process.Pid, sig)
			}
		} else {
			r.Problems = append(r.Problems, "skbtrace never said \"tracing N probes\"; no traffic sent")
		}
	}
	select {
	case <-done:
	case <-time.After(time.Until(deadline)):
		r.Problems = append(r.Problems, fmt.Sprintf("still running after the case's timeout (%v): killed", c.Timeout))
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
	end := time.Now()
	r.Total = end.Sub(start)
	if !stopAt.IsZero() {
		r.Stop = end.Sub(stopAt)
	}
	if r.Tracing == 0 && saysTracing(stderr.snapshot()) {
		r.Tracing = -1 // said, but not waited for (no traffic): unknown
	}
	r.Exit = cmd.ProcessState.ExitCode()
	r.Stdout, r.Stderr = stdout.snapshot(), stderr.snapshot()
	if c.Post != "" {
		out, err := exec.Command("sh", "-c", c.Post).CombinedOutput()
		if s := strings.TrimSpace(string(out)); s != "" {
			r.Notes = append(r.Notes, strings.Split(s, "\n")...)
		}
		if err != nil {
			r.Problems = append(r.Problems, fmt.Sprintf("post %q: %v", c.Post, err))
		}
	}
	// skbtrace hands slow teardowns (fentry and kprobe links) to a helper
	// process and returns: the leak check is for once the helper is done.
	if d := waitDetachHelpers(15 * time.Minute); d >= 100*time.Millisecond {
		r.Teardown = d
	}
	if after, ok := waitKernelState(before, 60*time.Second); !ok {
		r.Problems = append(r.Problems, fmt.Sprintf("left in the kernel after exit: %v (before: %v)", after, before))
	}
	return r
}

// traffic runs the case's traffic command; a failure is a problem of the case.
func (r *run) traffic(sh string, deadline time.Time) {
	t := exec.Command("timeout", strconv.Itoa(int(time.Until(deadline).Seconds())+1), "sh", "-c", sh)
	out, err := t.CombinedOutput()
	if s := strings.TrimSpace(string(out)); s != "" {
		r.Notes = append(r.Notes, strings.Split(s, "\n")...)
	}
	if err != nil {
		r.Problems = append(r.Problems, fmt.Sprintf("traffic %q: %v", sh, err))
	}
}

// waitKernelState polls until the kernel holds no more than want: BPF objects go
// when their last reference does, which may be after the process has exited.
func waitKernelState(want kernelState, limit time.Duration) (kernelState, bool) {
	deadline := time.Now().Add(limit)
	for {
		s := readKernelState()
		if s.within(want) {
			return s, true
		}
		if time.Now().After(deadline) {
			return s, false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func countMatches(lines []string, re *regexp.Regexp) int {
	n := 0
	for _, l := range lines {
		if re.MatchString(l) {
			n++
		}
	}
	return n
}

// funcCounts counts the event lines by their function, the 4th field of
// skbtrace's text output (TIME CPU SKB FUNCTION ...).
func funcCounts(lines []string) map[string]int {
	m := map[string]int{}
	for _, l := range lines {
		if f := strings.Fields(l); len(f) >= 4 && strings.HasPrefix(f[2], "0x") {
			m[f[3]]++
		}
	}
	return m
}

var (
	attachedLine = regexp.MustCompile(`^skbtrace: (\d+) functions attached with (\S+)`)
	skippedLine  = regexp.MustCompile(`^skbtrace: (\d+) functions skipped`)
)

// check returns what is wrong with the run for assertion a, or "".
func (r *run) check(a assert) string {
	switch a.Kind {
	case "exit":
		if r.Exit != a.N {
			return fmt.Sprintf("exit status %d", r.Exit)
		}
	case "stdout", "stderr":
		lines := r.Stdout
		if a.Kind == "stderr" {
			lines = r.Stderr
		}
		if n := countMatches(lines, a.Re); n != a.N {
			return fmt.Sprintf("%d lines match", n)
		}
	case "funcs":
		counts := funcCounts(r.Stdout)
		funcs := a.Funcs
		if len(funcs) == 1 && funcs[0] == "*" {
			if len(counts) == 0 {
				return "no event lines"
			}
			funcs = sortedKeys(counts)
		}
		var bad []string
		for _, f := range funcs {
			if counts[f] != a.N {
				bad = append(bad, fmt.Sprintf("%s:%d", f, counts[f]))
			}
		}
		if len(bad) > 0 {
			return "seen " + strings.Join(bad, " ")
		}
	case "attached":
		return r.checkAttached(a.Glob)
	}
	return ""
}

// checkAttached compares the attached count skbtrace printed with -v to the
// functions `skbtrace -l GLOB` lists minus those it said it skipped.
func (r *run) checkAttached(glob string) string {
	out, err := exec.Command("skbtrace", "-l", glob).Output()
	if err != nil {
		return fmt.Sprintf("skbtrace -l %s: %v", glob, err)
	}
	listed := len(strings.Fields(string(out)))
	attached, skipped := -1, 0
	for _, l := range r.Stderr {
		if m := attachedLine.FindStringSubmatch(l); m != nil {
			attached, _ = strconv.Atoi(m[1])
		}
		if m := skippedLine.FindStringSubmatch(l); m != nil {
			skipped, _ = strconv.Atoi(m[1])
		}
	}
	if attached < 0 {
		return "no \"N functions attached\" line (run with -v)"
	}
	if attached != listed-skipped {
		return fmt.Sprintf("%d attached, but %d listed - %d skipped = %d", attached, listed, skipped, listed-skipped)
	}
	return ""
}

// report prints the run and the assertions' results; it returns whether all held.
func (c *testCase) report(w io.Writer, env *kernelEnv, r *run) bool {
	fmt.Fprintf(w, "$ %s\n", c.Run)
	if c.Traffic != "" {
		fmt.Fprintf(w, "traffic: %s\n", c.Traffic)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  traffic| %s\n", n)
	}
	for _, l := range r.Stderr {
		fmt.Fprintf(w, "  stderr| %s\n", l)
	}
	ok := len(r.Problems) == 0
	var results []string
	for _, a := range c.Asserts {
		on, err := a.Cond.holds(env)
		if err != nil {
			ok = false
			results = append(results, fmt.Sprintf("FAIL  line %d: %v: %v", a.Line, a, err))
			continue
		}
		if !on {
			continue
		}
		if why := r.check(a); why != "" {
			ok = false
			results = append(results, fmt.Sprintf("FAIL  line %d: %v: %s", a.Line, a, why))
		} else {
			results = append(results, fmt.Sprintf("ok    %v", a))
		}
	}
	const shown = 300
	fmt.Fprintf(w, "stdout: %d lines\n", len(r.Stdout))
	for i, l := range r.Stdout {
		if i == shown {
			fmt.Fprintf(w, "  stdout| ... %d more\n", len(r.Stdout)-shown)
			break
		}
		fmt.Fprintf(w, "  stdout| %s\n", l)
	}
	if counts := funcCounts(r.Stdout); len(counts) > 0 {
		fmt.Fprintf(w, "functions (%d):", len(counts))
		for _, f := range sortedKeys(counts) {
			fmt.Fprintf(w, " %s:%d", f, counts[f])
		}
		fmt.Fprintln(w)
	}
	for _, p := range r.Problems {
		fmt.Fprintf(w, "FAIL  %s\n", p)
	}
	for _, s := range results {
		fmt.Fprintln(w, s)
	}
	fmt.Fprintf(w, "TIMES case=%s kernel=%s tracing=%.2f stop=%.2f teardown=%.2f first=%.3f total=%.2f\n",
		c.Name, env.Label, r.Tracing.Seconds(), r.Stop.Seconds(), r.Teardown.Seconds(), r.First.Seconds(), r.Total.Seconds())
	return ok
}

// runCases runs the case files that apply to the kernel it runs on, which
// run.sh calls kv, one after another, and prints each one's output and a
// summary; it returns the exit status. The first line is the kernel's
// environment (kernelEnv.String), which conditions are decided on.
func runCases(w io.Writer, kv string, paths []string) int {
	env, err := guestEnv(kv)
	fmt.Fprintln(w, env)
	if err != nil {
		fmt.Fprintf(w, "vmtool: no BTF names (no kprobe-multi, drop-reasons, btf:NAME): %v\n", err)
	}
	var passed, failed []string
	for _, p := range paths {
		c, err := parseCaseFile(p)
		if err != nil {
			fmt.Fprintf(w, "=== %v\n--- FAIL %s\n", err, p)
			failed = append(failed, p)
			continue
		}
		on, err := c.runsOn(env)
		if err != nil {
			fmt.Fprintf(w, "=== %s: kernels: %v\n--- FAIL %s [%s]\n", c.Name, err, c.Name, kv)
			failed = append(failed, c.Name)
			continue
		}
		if !on {
			fmt.Fprintf(w, "--- SKIP %s [%s] (kernels %s)\n", c.Name, kv, c.Kernels)
			continue
		}
		fmt.Fprintf(w, "=== RUN %s [%s]\n", c.Name, kv)
		r := c.execute()
		if c.report(w, env, r) {
			fmt.Fprintf(w, "--- PASS %s [%s] (%.1fs)\n", c.Name, kv, r.Total.Seconds())
			passed = append(passed, c.Name)
		} else {
			fmt.Fprintf(w, "--- FAIL %s [%s] (%.1fs)\n", c.Name, kv, r.Total.Seconds())
			failed = append(failed, c.Name)
		}
	}
	fmt.Fprintf(w, "SUMMARY kernel %s: %d passed, %d failed %s\n", kv, len(passed), len(failed), strings.Join(failed, " "))
	if len(failed) > 0 {
		return 1
	}
	return 0
}

// detachHelperName is the comm of skbtrace's detach helper
// (runtime.DetachHelperName).
const detachHelperName = "skbtrace-detach"

// waitDetachHelpers waits, up to limit, until no skbtrace detach helper
// runs; it returns how long it waited.
func waitDetachHelpers(limit time.Duration) time.Duration {
	start := time.Now()
	for time.Since(start) < limit && detachHelpers() > 0 {
		time.Sleep(100 * time.Millisecond)
	}
	return time.Since(start)
}

// detachHelpers counts the processes whose argv[0] is detachHelperName.
func detachHelpers() int {
	n := 0
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if argv0, _, _ := strings.Cut(string(b), "\x00"); err == nil && argv0 == detachHelperName {
			n++
		}
	}
	return n
}
