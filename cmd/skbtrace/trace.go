package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/runtime/output"
	"github.com/skbtrace/skbtrace/runtime/pipeline"
	"github.com/skbtrace/skbtrace/runtime/session"
)

// compileAndRun parses and checks the script, then dumps or runs it.
func compileAndRun(o options, src *lang.Source, stdout, stderr io.Writer) int {
	resumeGC := pauseGC()
	defer resumeGC()
	// An earlier run's detach helper pauses from here to the attach
	// (session's gate.go), so that its close under way ends meanwhile.
	releaseGate := session.HoldAttachGate()
	defer releaseGate()
	plan := pipeline.New(o.config(src.Params, stderr))
	defer plan.Close()
	err := plan.Parse(src)
	var kinds []lang.ProbeKind
	if err == nil {
		// bpftrace's -p, --probe-filter and BPFTRACE_* (btflags.go).
		plan.Script, err = o.bt.rewrite(envConfig(plan.Script))
	}
	if err == nil {
		kinds = probeKinds(plan.Script)
		err = plan.Check()
	}
	if err != nil {
		return report(stderr, err)
	}
	kind := outputFor(o, kinds, plan.Script, plan.Info)
	if o.tb.test || o.tb.bench {
		return runTestsOrBenches(o.tb, plan, kind.format(o), stdout, stderr)
	}
	if err := onlyTestProbes(plan.Script); err != nil && !o.dump {
		return report(stderr, err)
	}
	if o.dump {
		return dump(plan, stdout, stderr)
	}
	o.stages.printTree(plan, stdout)
	if o.bt.dryRun {
		return dryRun(plan, o.stages, stdout, stderr)
	}
	resumeLater := resumeGCLater(resumeGC)
	return trace(o, kind, plan, func() { releaseGate(); resumeLater() }, stdout, stderr)
}

// dump prints the checked tree, then each program's instructions as trace
// would load them (the backend auto or --backend chooses, tracepoints
// included, --filter and -w applied) and, where the kernel lets them load,
// how many instructions the verifier processed. Where no backend of this
// kernel would run the script, it says why and prints the programs as
// compiled for kprobes.
func dump(plan *pipeline.Plan, stdout, stderr io.Writer) int {
	lang.DumpWith(stdout, plan.Script, plan.Info.Describe)
	notRun, err := plan.CompileAnyway()
	if err != nil {
		return report(stderr, err)
	}
	if notRun != nil {
		fmt.Fprintln(stderr, "skbtrace: -d: this kernel would not trace it as it is, so the programs below are as compiled for kprobes:")
		report(stderr, notRun)
	}
	plan.Dump(stdout)
	return 0
}

// report prints a script's diagnostics, or any other error, and returns the
// exit status.
func report(w io.Writer, err error) int {
	var d *lang.Diagnostics
	if errors.As(err, &d) {
		fmt.Fprint(w, paintDiagnostics(d.Error(), colorRed))
		return 1
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "ERROR: ") {
		// One in bpftrace's words keeps them alone.
		msg = "skbtrace: " + msg
	}
	fmt.Fprint(w, paintDiagnostics(msg+"\n", colorRed))
	return 1
}

// trace compiles the checked plan, attaches and traces until Ctrl-C,
// SIGTERM, --duration or the end of -c's command; then it detaches and
// prints the maps. attached is called once the programs are attached (to
// resume the garbage collector).
func trace(o options, kind outputKind, plan *pipeline.Plan, attached func(), stdout, stderr io.Writer) int {
	var limit time.Duration
	if o.duration != "" {
		d, err := time.ParseDuration(o.duration)
		if err != nil || d <= 0 {
			fmt.Fprintf(stderr, "skbtrace: --duration takes a positive duration such as 10s or 500ms, not %q\n", o.duration)
			return 1
		}
		limit = d
	}
	// Signals are watched before anything loads: one that comes during
	// loading and attaching ends tracing once they are done.
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	defer watchSignals(stop, stderr)()
	msrv, err := listenMetrics(o, stderr)
	if err != nil {
		return report(stderr, err)
	}
	if msrv != nil {
		defer msrv.Close()
	}
	if err := plan.Compile(); err != nil {
		return report(stderr, err)
	}
	o.stages.printCode(plan, stdout, stderr)
	out := plan.Output
	if len(out.Programs) == 0 && !out.WaitsForBPF() {
		fmt.Fprintln(stderr, "skbtrace: nothing to trace: no probe of the script matched")
		return 1
	}
	w := stdout
	// outRot and capRot rotate -o's and -w's files (-C, -G, -W: rotate.go).
	var outRot, capRot *output.Rotator
	if o.output != "" {
		f, rot, err := o.rotate.createOutput(o.output, true)
		if err != nil {
			return report(stderr, err)
		}
		defer f.Close()
		w, outRot = f, rot
	}
	var capture io.Writer
	switch {
	case o.write == "-":
		// The packets take stdout; lines, if any, go to stderr.
		capture = stdout
		if o.output == "" {
			w = stderr
		}
	case o.write != "":
		f, rot, err := o.rotate.createOutput(o.write, false)
		if err != nil {
			return report(stderr, err)
		}
		defer f.Close()
		capture, capRot = f, rot
	}
	if plan.Funcs != nil && isTerminal(stderr) {
		plan.Funcs.Progress = stderr
	}
	if err := setProgressive(o, plan); err != nil {
		return report(stderr, err)
	}
	// A program written for bpftrace prints what bpftrace prints
	// (outputrule.go): its print() values, map and stack layouts, JSON.
	bt := kind.layout
	sopts := session.Options{Format: kind.format(o), DecimalOffsets: bt, Verbose: o.verbose, Capture: capture}
	if res := startNames(ctx, o, bt, stderr); res != nil {
		defer res.Close()
		if !bt {
			sopts.Names = output.ResolverNames(res)
		}
		if !o.scope.Empty() {
			sopts.Scope = pipeline.Scope(res, o.scope)
		}
	}
	if kind.bpftrace && !o.quiet && o.format == "json" {
		// The first object, before begin's output, as bpftrace prints it.
		io.WriteString(w, output.AttachedLine(true, plan.Probes(nil)-synthesized(plan.Script)))
	}
	// rule()'s namer, with --nftrace its trace tables (rules.go).
	namer, err := startRules(o, plan.Output, stderr)
	if err != nil {
		return report(stderr, err)
	}
	defer namer.Close()
	sopts.Rules = namer
	// bpftrace's begin prints after the "Attached" line (heldwriter.go).
	sw := w
	var held *heldWriter
	if kind.bpftrace {
		held = newHeldWriter(w)
		defer held.release()
		sw = held
	}
	sess, err := plan.Start(sw, sopts)
	if err != nil {
		return report(stderr, err)
	}
	defer sess.Close()
	attached()

	if limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	n := plan.Probes(sess.FuncStats())
	if msrv != nil {
		if err := serveMetrics(msrv, o, sess, n, stderr); err != nil {
			return report(stderr, err)
		}
	}
	ow, err := startOverhead(o, sess, msrv, stderr, stop)
	if err != nil {
		return report(stderr, err)
	}
	defer ow.close()
	if !o.scope.Empty() && sess.Scoped() == 0 {
		fmt.Fprintf(stderr, "skbtrace: no network namespace matches %s yet: its packets are traced from the first, once one does\n", describeScope(o.scope))
	}
	switch {
	case o.quiet, kind.bpftrace && o.format == "json":
	case kind.bpftrace:
		// Once attached, as bpftrace 0.26 says it (on stderr).
		io.WriteString(stderr, output.AttachedLine(false, n-synthesized(plan.Script)))
	default:
		fmt.Fprintf(stderr, "skbtrace: tracing %d %s; Ctrl-C to end\n", n, plural(n, "probe"))
	}
	if os.Getenv(notifyAttachedEnv) != "" {
		// bpftrace's runtime tests start what runs beside a program on it.
		fmt.Fprintln(stdout, notifyAttachedEnv)
	}
	if held != nil {
		held.release()
	}
	o.bt.notes(stderr)
	// exit() in the script ends tracing like Ctrl-C; so does the end of
	// -p's process.
	pidExited := o.bt.pidExited()
	go func() {
		select {
		case <-sess.Exited():
			stop()
		case <-pidExited:
			stop()
		case <-ctx.Done():
		}
	}()
	status := 0
	if o.command != "" {
		status = runCommand(ctx, o.command, stderr, func(pid int) {
			if err := sess.SetCpid(pid); err != nil {
				fmt.Fprintf(stderr, "skbtrace: -c: cpid: %v\n", err)
			}
		})
	} else {
		<-ctx.Done()
	}
	if msrv != nil {
		// No scrape reads the maps while they are detached and printed.
		msrv.Close()
	}
	ow.stop()
	if err := sess.Detach(); err != nil {
		fmt.Fprintf(stderr, "skbtrace: reading events: %v\n", err)
		status = 1
	}
	if code := sess.ExitCode(); code != 0 && status == 0 {
		status = code // exit(code), as bpftrace exits
	}
	// What was not seen: runs skipped, records lost, functions not
	// attached, captures cut (summary.go).
	exitSummary(sess.Misses(), o, kind, w, stderr)
	ow.summary(stderr, map[bool]io.Writer{true: w}[o.format == "json"])
	// The files rotated, named once the printer is done with them.
	o.rotate.reportFiles("-w", capRot, o.format == "json", w, stderr)
	o.rotate.reportFiles("-o", outRot, o.format == "json", w, stderr)
	if !plan.Info.Config.PrintMapsOnExit {
		// config = { print_maps_on_exit = 0 }
		return status
	}
	if err := sess.PrintMaps(w); err != nil {
		return report(stderr, err)
	}
	return status
}

// notifyAttachedEnv, set, has the line of its name printed on stdout once
// the probes are attached, as bpftrace does for its runtime tests.
const notifyAttachedEnv = "__BPFTRACE_NOTIFY_PROBES_ATTACHED"

// runCommand runs -c's command under sh and waits for it, or for the end of
// tracing, whichever comes first. It returns the command's exit status, or
// 128+N where a signal N killed it, as the shell and bpftrace do; 0 where
// tracing ended first and the command was stopped. started is given the
// command's process id before it runs: the shell waits for a line on its
// stdin, sent once started returned, then execs the command (whose stdin
// then ends, as /dev/null would).
func runCommand(ctx context.Context, command string, stderr io.Writer, started func(pid int)) int {
	// A plain list of words is exec'd as it is, as bpftrace runs it, so
	// that its process is the one started (cpid): a shell would fork it.
	args := []string{"-c", `read -r _; exec /bin/sh -c "$1"`, "sh", command}
	if words := strings.Fields(command); len(words) > 0 && !strings.ContainsAny(command, ";&|<>()$`\\\"'*?[]~{}=#\n") && isProgram(words[0]) {
		args = append([]string{"-c", `read -r _; exec "$@"`, "sh"}, strings.Fields(command)...)
	}
	cmd := exec.CommandContext(ctx, "/bin/sh", args...)
	cmd.Stdout, cmd.Stderr = stderr, stderr
	gate, err := cmd.StdinPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err == nil {
		started(cmd.Process.Pid)
		io.WriteString(gate, "\n")
		gate.Close()
		err = cmd.Wait()
	}
	if err == nil || ctx.Err() != nil {
		return 0
	}
	ee, ok := err.(*exec.ExitError)
	if !ok {
		fmt.Fprintf(stderr, "skbtrace: -c: %v\n", err)
		return 1
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ee.ExitCode()
}

// isProgram reports whether name is a program on PATH, not a shell
// builtin (exit, cd).
func isProgram(name string) bool {
	if builtin := map[string]bool{"exit": true, "cd": true, "exec": true, "true": true, "false": true, "echo": true, "kill": true, "test": true}; builtin[name] {
		return false
	}
	_, err := exec.LookPath(name)
	return err == nil
}

// isTerminal reports whether w is a terminal, where a progress line that
// redraws itself makes sense.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

func plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}
