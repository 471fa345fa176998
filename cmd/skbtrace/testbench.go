package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cilium/ebpf"
	"github.com/spf13/pflag"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/runtime/pipeline"
	"github.com/skbtrace/skbtrace/runtime/session"
)

// bpftrace 0.26's test: and bench: probes and its --test and --bench
// (its --help, DEVELOPER OPTIONS): --test runs each test:NAME once, in
// script order, and reports it as bpftrace does (googletest's lines, in
// colour); a test fails where its exit() gives a code other than 0
// (assert() failing is exit(1)). --bench times each bench:NAME and prints
// a table. Without them, test: and bench: probes are not run, and a
// script of nothing else is an error. The programs run as bpftrace runs
// them: XDP programs, with BPF_PROG_TEST_RUN on 14 zero bytes.
//
// begin runs before the tests, as in bpftrace, its output not shown; a
// failed test's output is shown between its RUN and FAILED lines, a
// passed one's not, as bpftrace does; end runs after the report (after
// the table with --bench), its output shown, as in bpftrace. Unlike
// bpftrace, an exit(N) in end does not set the exit status.

type testBenchOptions struct {
	test, bench bool
}

func addTestBenchFlags(fs *pflag.FlagSet, t *testBenchOptions) {
	fs.BoolVar(&t.test, "test", false, "run the script's test: probes, each once, and report which pass (a test fails where it calls exit() with a code other than 0, or an assert fails)")
	fs.BoolVar(&t.bench, "bench", false, "time the script's bench: probes, each run many times by the kernel, and print a table")
}

const (
	gtestGreen = "\x1b[32m"
	gtestRed   = "\x1b[31m"
)

// testBenchKinds counts the probes of each kind among the script's.
func testBenchKinds(s *lang.Script) (tests, benches, others int) {
	for _, p := range s.Probes {
		if p.Implicit {
			continue
		}
		for _, sp := range p.Specs {
			switch sp.Kind {
			case lang.ProbeTest:
				tests++
			case lang.ProbeBench:
				benches++
			default:
				others++
			}
		}
	}
	return
}

// onlyTestProbes is bpftrace's error for a script of test: or bench:
// probes alone, run without --test or --bench.
func onlyTestProbes(s *lang.Script) error {
	tests, benches, others := testBenchKinds(s)
	switch {
	case others > 0:
		return nil
	case tests > 0:
		return fmt.Errorf("No probes attached; use --test to run test probes.")
	case benches > 0:
		return fmt.Errorf("No probes attached; use --bench to run benchmark probes.")
	}
	return nil
}

// runTestsOrBenches compiles and loads the script and runs its test: or
// bench: programs; the exit status is 1 where a test failed.
func runTestsOrBenches(t testBenchOptions, plan *pipeline.Plan, format string, stdout, stderr io.Writer) int {
	if err := plan.Compile(); err != nil {
		return report(stderr, err)
	}
	coll, err := plan.LoadCollection()
	if err != nil {
		return report(stderr, err)
	}
	defer coll.Close()
	printed, err := session.NewTestOutput(coll, plan.Output, format)
	if err != nil {
		return report(stderr, err)
	}
	defer printed.Close()
	// begin runs first, as in bpftrace: what it sets, the tests read.
	// What it prints is not shown (bpftrace's is not either).
	for _, p := range plan.Output.Programs {
		if p.Helper == "" && p.Attach.Kind == codegen.AttachBegin {
			if _, err := coll.Programs[p.Name].Run(&ebpf.RunOptions{}); err != nil {
				return report(stderr, fmt.Errorf("begin: %w", err))
			}
		}
	}
	if _, err := printed.Take(); err != nil {
		return report(stderr, err)
	}
	kind := codegen.AttachTest
	if t.bench {
		kind = codegen.AttachBench
	}
	var progs []*codegen.Program
	for _, p := range plan.Output.Programs {
		if p.Helper == "" && p.Attach.Kind == kind {
			progs = append(progs, p)
		}
	}
	var runs []*programRun
	for _, p := range progs {
		runs = append(runs, &programRun{name: p.Attach.Name, prog: coll.Programs[p.Name]})
	}
	var status int
	if t.bench {
		status = printBenches(runs, stdout, stderr)
	} else {
		status = printTests(runs, printed, stdout, stderr)
	}
	if err := runEnd(plan, coll, printed, stdout); err != nil {
		return report(stderr, err)
	}
	// Where bpftrace prints the maps at exit: two newlines.
	fmt.Fprint(stdout, "\n\n")
	return status
}

// runEnd runs the script's end probes once the tests or benches are done,
// and prints what they printed, as bpftrace does.
func runEnd(plan *pipeline.Plan, coll *ebpf.Collection, printed *session.TestOutput, w io.Writer) error {
	for _, p := range plan.Output.Programs {
		if p.Helper == "" && p.Attach.Kind == codegen.AttachEnd {
			if _, err := coll.Programs[p.Name].Run(&ebpf.RunOptions{}); err != nil {
				return fmt.Errorf("end: %w", err)
			}
		}
	}
	out, err := printed.Take()
	if err != nil {
		return err
	}
	_, err = w.Write(out)
	return err
}

// programRun is a test: or bench: program and its name.
type programRun struct {
	name string
	prog *ebpf.Program
}

// printTests runs the tests and reports them as bpftrace 0.26 does.
func printTests(runs []*programRun, printed *session.TestOutput, w, stderr io.Writer) int {
	line := func(color, tag, text string) {
		fmt.Fprintf(w, "%s[%s]%s %s\n", color, tag, "\x1b[0m", text)
	}
	line(gtestGreen, "==========", fmt.Sprintf("Running %d tests.", len(runs)))
	var failed []string
	for _, r := range runs {
		line(gtestGreen, " RUN      ", r.name)
		code, took, err := session.RunTest(r.prog)
		if err != nil {
			fmt.Fprintf(stderr, "skbtrace: test:%s: %v\n", r.name, err)
		}
		out, perr := printed.Take()
		if perr != nil {
			fmt.Fprintf(stderr, "skbtrace: test:%s: reading what it printed: %v\n", r.name, perr)
		}
		if err != nil || code != 0 {
			// A failed test's output is shown, as bpftrace shows it.
			w.Write(out)
			line(gtestRed, "  FAILED  ", fmt.Sprintf("%s (%s)", r.name, testDuration(took)))
			failed = append(failed, r.name)
			continue
		}
		line(gtestGreen, "       OK ", fmt.Sprintf("%s (%s)", r.name, testDuration(took)))
	}
	line(gtestGreen, "==========", fmt.Sprintf("%d %s ran.", len(runs), plural(len(runs), "test")))
	passed := len(runs) - len(failed)
	line(gtestGreen, "  PASSED  ", fmt.Sprintf("%d %s.", passed, plural(passed, "test")))
	if len(failed) > 0 {
		line(gtestRed, "  FAILED  ", fmt.Sprintf("%d %s, listed below:", len(failed), plural(len(failed), "test")))
		for _, n := range failed {
			line(gtestRed, "  FAILED  ", n)
		}
	}
	if len(failed) > 0 {
		return 1
	}
	return 0
}

// testDuration is a test's time as bpftrace prints it: ns under a
// microsecond, else μs.
func testDuration(d time.Duration) string {
	if d < time.Microsecond {
		return fmt.Sprintf("%d ns", d.Nanoseconds())
	}
	return fmt.Sprintf("%d μs", d.Microseconds())
}

// printBenches times the benches and prints bpftrace 0.26's table: the
// name column one wider than the longest name, or than 40.
func printBenches(runs []*programRun, w, stderr io.Writer) int {
	width := 40
	for _, r := range runs {
		width = max(width, len(r.name))
	}
	width++
	fmt.Fprintf(w, "%-*s%-15s%s\n%s\n", width, "Benchmark", "Time(ns)", "Iterations", strings.Repeat("-", width+15+len("Iterations")))
	status := 0
	for _, r := range runs {
		per, n, err := session.RunBench(r.prog)
		if err != nil {
			fmt.Fprintf(stderr, "skbtrace: bench:%s: %v\n", r.name, err)
			status = 1
			continue
		}
		fmt.Fprintf(w, "%-*s%-15d%d\n", width, r.name, per.Nanoseconds(), n)
	}
	return status
}
