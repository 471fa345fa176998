package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cilium/ebpf/btf"
	"golang.org/x/sys/unix"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/runtime"
	"github.com/skbtrace/skbtrace/runtime/kernel"
)

// trace compiles, attaches and traces until Ctrl-C, SIGTERM, --duration or
// the end of -c's command; then it detaches and prints the maps. kt gives
// the kernel's types: its whole BTF (or --btf FILE's), decoded on first use,
// and the type IDs of the BTF cache, where it answered the check: a script
// checked against it may need no other. attached is called once the
// programs are attached (to resume the garbage collector).
func trace(o options, script *lang.Script, info *check.Info, kt *kernelTypes, attached func(), stdout, stderr io.Writer) int {
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
	msrv, err := listenMetrics(o)
	if err != nil {
		fmt.Fprintf(stderr, "skbtrace: %v\n", err)
		return 1
	}
	if msrv != nil {
		defer msrv.Close()
	}
	out, funcs, err := compileFor(o, script, info, kt.whole, stderr)
	if err != nil {
		return report(stderr, err)
	}
	if len(out.Programs) == 0 && !out.WaitsForBPF() {
		fmt.Fprintln(stderr, "skbtrace: nothing to trace: no probe of the script matched")
		return 1
	}
	w := stdout
	if o.output != "" {
		f, err := os.Create(o.output)
		if err != nil {
			fmt.Fprintf(stderr, "skbtrace: %v\n", err)
			return 1
		}
		defer f.Close()
		w = f
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
		f, err := os.Create(o.write)
		if err != nil {
			fmt.Fprintf(stderr, "skbtrace: %v\n", err)
			return 1
		}
		defer f.Close()
		capture = f
	}
	if funcs != nil && isTerminal(stderr) {
		funcs.Progress = stderr
	}
	started := time.Now()
	// A script written for bpftrace prints what bpftrace prints: its
	// "Attaching" line, its map and stack layouts.
	bt := strings.HasSuffix(script.Src.Name, ".bt")
	if bt && o.format != "json" {
		fmt.Fprintf(w, "Attaching %d %s...\n", countProbes(out, nil), plural(countProbes(out, nil), "probe"))
	}
	sess, err := runtime.Start(out, w, runtime.Options{JSON: o.format == "json", Timeline: o.timeline, Graph: o.graph, Verbose: o.verbose, Funcs: funcs, Bpftrace: bt,
		Capture: capture, Snaplen: o.snaplen, KernelTypes: kt.typeIDs(),
		Warn: func(format string, args ...any) { fmt.Fprintf(stderr, "skbtrace: "+format+"\n", args...) }})
	if err != nil {
		fmt.Fprintf(stderr, "skbtrace: %v\n", err)
		return 1
	}
	defer sess.Close()
	attached()
	if st := sess.FuncStats(); st != nil {
		for _, l := range st.Summary() {
			fmt.Fprintf(stderr, "skbtrace: %s\n", l)
		}
		if o.verbose {
			fmt.Fprintf(stderr, "skbtrace: %d functions attached with %s in %v\n", st.Attached, st.Backend, st.Elapsed.Round(time.Millisecond))
			sayEntries(st, stderr)
		}
	}
	if o.verbose {
		if probes, programs := sess.Shared(); probes > programs {
			fmt.Fprintf(stderr, "skbtrace: %d probes run in %d programs: probes on one attach point share one\n", probes, programs)
		}
		fmt.Fprintf(stderr, "skbtrace: loaded and attached in %v\n", time.Since(started).Round(time.Millisecond))
	}

	if limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	n := countProbes(out, sess.FuncStats())
	if msrv != nil {
		if err := serveMetrics(msrv, o, sess, n, stderr); err != nil {
			fmt.Fprintf(stderr, "skbtrace: %v\n", err)
			return 1
		}
	}
	fmt.Fprintf(stderr, "skbtrace: tracing %d %s; Ctrl-C to end\n", n, plural(n, "probe"))
	// exit() in the script ends tracing like Ctrl-C.
	go func() {
		select {
		case <-sess.Exited():
			stop()
		case <-ctx.Done():
		}
	}()
	status := 0
	if o.command != "" {
		status = runCommand(ctx, o.command, stderr)
	} else {
		<-ctx.Done()
	}
	if msrv != nil {
		// No scrape reads the maps while they are detached and printed.
		msrv.Close()
	}
	if err := sess.Detach(); err != nil {
		fmt.Fprintf(stderr, "skbtrace: reading events: %v\n", err)
		status = 1
	}
	if n, buffer := sess.Lost(); n > 0 {
		fmt.Fprintf(stderr, "skbtrace: %d events lost: the %s was full\n", n, buffer)
		if o.format == "json" {
			fmt.Fprintf(w, "{\"data\":{\"buffer\":%q,\"events\":%d},\"type\":\"lost\"}\n", buffer, n)
		}
	}
	if !info.Config.PrintMapsOnExit {
		// config = { print_maps_on_exit = 0 }
		return status
	}
	if err := sess.PrintMaps(w); err != nil {
		fmt.Fprintf(stderr, "skbtrace: %v\n", err)
		return 1
	}
	return status
}

// compileFor generates the programs as they will be loaded: skb: globs
// resolved against this kernel (functions or tracepoints), events to the
// buffer --events names. What it says along the way goes to stderr.
func compileFor(o options, script *lang.Script, info *check.Info, whole func() (*btf.Spec, error), stderr io.Writer) (*codegen.Output, *runtime.FuncAttach, error) {
	opts, funcs, err := skbBackend(o, script, whole, stderr)
	if err == nil {
		funcs, err = globBackend(o, info, funcs)
	}
	if err == nil {
		err = eventOptions(o, &opts)
	}
	if err != nil {
		return nil, nil, err
	}
	if funcs != nil {
		// kprobe-multi links take programs compiled for them.
		opts.Backend, opts.GlobBackend = funcs.Backend, funcs.Kprobe
	}
	opts.Ksym = kernel.KsymAddr
	opts.HaveFuncIP = kernel.HaveFuncIPHelper
	opts.HaveHelper = kernel.HaveHelper
	if o.verbose && !kernel.HaveFuncIPHelper() {
		fmt.Fprintln(stderr, "skbtrace: this kernel has no bpf_get_func_ip (Linux 5.15 added it): func comes from each program's own function, or a kprobe's instruction pointer")
	}
	opts.Snaplen = o.snaplen
	if len(info.Capture) > 0 {
		// Packets beyond their linear part: their pages' addresses.
		spec, err := whole()
		var mul, off uint64
		if err == nil {
			mul, off, err = kernel.PageVirt(spec)
		}
		if err != nil {
			fmt.Fprintf(stderr, "skbtrace: -w: packets are cut at their linear part: %v\n", err)
		}
		opts.PageMul, opts.PageOff = mul, off
	}
	out, err := codegen.Compile(script, info, opts)
	return out, funcs, err
}

// runCommand runs -c's command under sh and waits for it, or for the end of
// tracing, whichever comes first. It returns the command's exit status, or
// 128+N where a signal N killed it, as the shell and bpftrace do; 0 where
// tracing ended first and the command was stopped.
func runCommand(ctx context.Context, command string, stderr io.Writer) int {
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, stderr, stderr
	err := cmd.Run()
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

// skbBackend decides how skb: probes attach: to the kernel functions that
// discovery finds, with the backend --backend names or the fastest that
// works (kprobe-multi, fentry, kprobe); where none works, to every
// tracepoint that carries an sk_buff, which it says on stderr.
func skbBackend(o options, script *lang.Script, whole func() (*btf.Spec, error), stderr io.Writer) (codegen.Options, *runtime.FuncAttach, error) {
	// globs are the skb: patterns, each with where it is first written.
	globs := map[string]*lang.ProbeSpec{}
	for _, p := range script.Probes {
		for _, s := range p.Specs {
			if (s.Kind == lang.ProbeSkb || s.Kind == lang.ProbeSkbRet) && globs[s.Target] == nil {
				globs[s.Target] = s
			}
		}
	}
	if len(globs) == 0 {
		return codegen.Options{}, nil, nil
	}
	var disc *kernel.Discovery
	probe := func(b runtime.Backend) error {
		if disc == nil {
			d, _, err := kernel.CachedDiscovery(o.btfFile)
			if err != nil {
				return err
			}
			disc = d
		}
		return probeOn(disc)(b)
	}
	backend, reasons, err := runtime.ChooseBackend(o.backend, probe)
	if err != nil {
		return codegen.Options{}, nil, err
	}
	if rets := skbRetSpecs(script); backend == runtime.BackendTracepoint && len(rets) > 0 {
		return codegen.Options{}, nil, noReturns(script, rets, reasons)
	}
	if backend == runtime.BackendTracepoint {
		spec, err := whole()
		if err != nil {
			return codegen.Options{}, nil, err
		}
		return tracepointFallback(o, script, globs, reasons, spec, stderr)
	}
	if o.backend == "auto" || o.backend == "" {
		fmt.Fprintf(stderr, "skbtrace: skb: probes attach with %s (%s)\n", backend, runtime.AutoWhy(backend, reasons))
	}
	if o.btfFile == "" && kernel.ModuleBTFMissing() {
		fmt.Fprintln(stderr, "skbtrace: this kernel has no BTF for its modules (Linux 5.11 added it): skb: probes cover vmlinux's functions; kprobe:FN still traces a module's function")
	}
	opts := codegen.Options{SkbTargets: map[string][]codegen.SkbTarget{}}
	fa := &runtime.FuncAttach{Backend: backend, Funcs: map[string][]kernel.SkbFunc{}}
	for _, g := range slices.Sorted(maps.Keys(globs)) {
		// A name that matches nothing compiles to no program.
		fns := disc.Match(g)
		if len(fns) > 0 {
			fa.Funcs[g] = fns
		}
		opts.SkbTargets[g] = funcTargets(backend, fns)
	}
	if err := unmatchedSkb(script, func(g string) bool { return len(fa.Funcs[g]) > 0 }, stderr); err != nil {
		return codegen.Options{}, nil, err
	}
	retAttach(backend, disc, skbRetSpecs(script), &opts, fa)
	return opts, fa, nil
}

// funcTargets are the programs an skb: glob compiles to on a function
// backend: one per function with fentry; with kprobes, one per place of the
// skb and the drop reason among the arguments, each attached by the runtime
// to every function whose arguments are so placed.
func funcTargets(backend runtime.Backend, fns []kernel.SkbFunc) []codegen.SkbTarget {
	var tgs []codegen.SkbTarget
	seen := map[codegen.SkbTarget]bool{}
	for _, f := range fns {
		tg := codegen.SkbTarget{SkbArg: f.SkbArg, HasReason: f.ReasonArg >= 0, ReasonArg: max(f.ReasonArg, 0)}
		if backend == runtime.BackendFentry {
			tg.Name, tg.Fentry = f.Name, true
		} else if seen[tg] {
			continue
		}
		seen[tg] = true
		tgs = append(tgs, tg)
	}
	if backend != runtime.BackendFentry {
		slices.SortFunc(tgs, func(a, b codegen.SkbTarget) int {
			if a.SkbArg != b.SkbArg {
				return a.SkbArg - b.SkbArg
			}
			return a.ReasonArg - b.ReasonArg
		})
	}
	return tgs
}

// unmatchedSkb judges the skb: names that match nothing here. A probe
// whose names all match nothing is a mistake: an error at each, before
// anything is attached. A probe that lists alternatives (skb:kfree_skb_reason,
// skb:sk_skb_reason_drop: one kernel has the one, another the other) attaches
// to those that match, and the rest are named on stderr.
func unmatchedSkb(script *lang.Script, matches func(glob string) bool, stderr io.Writer) error {
	d := &lang.Diagnostics{Src: script.Src}
	warned := map[string]bool{}
	for _, p := range script.Probes {
		var missing []*lang.ProbeSpec
		for _, s := range p.Specs {
			if (s.Kind == lang.ProbeSkb || s.Kind == lang.ProbeSkbRet) && !matches(s.Target) {
				missing = append(missing, s)
			}
		}
		if len(missing) == len(p.Specs) {
			for _, s := range missing {
				d.Add(s.At, "skb: probes attach to the kernel functions that take a struct sk_buff * or, where those cannot be probed, to the tracepoints that carry one: skbtrace -l 'skb:*' lists them",
					"%s matches nothing to trace", s.Text)
			}
			continue
		}
		for _, s := range missing {
			if !warned[s.Text] {
				warned[s.Text] = true
				fmt.Fprintf(stderr, "skbtrace: %s matches nothing on this kernel; its probe attaches to the others it lists\n", s.Text)
			}
		}
	}
	return d.Err()
}

// probeOn tries a backend on a function of discovery's.
func probeOn(d *kernel.Discovery) func(runtime.Backend) error {
	return func(b runtime.Backend) error {
		if len(d.Funcs) == 0 {
			return fmt.Errorf("no traceable function takes a struct sk_buff *")
		}
		return runtime.ProbeBackend(b, probeTarget(d))
	}
}

// probeTarget is the function the backends are tried on: one every kernel
// has where possible.
func probeTarget(d *kernel.Discovery) string {
	for _, f := range d.Funcs {
		if f.Name == "kfree_skbmem" || f.Name == "ip_rcv" {
			return f.Name
		}
	}
	return d.Funcs[0].Name
}

// tracepointFallback attaches skb: probes to every tracepoint that carries
// an sk_buff, saying why on stderr.
func tracepointFallback(o options, script *lang.Script, globs map[string]*lang.ProbeSpec, reasons []string, spec *btf.Spec, stderr io.Writer) (codegen.Options, *runtime.FuncAttach, error) {
	names := map[string]bool{}
	for g := range globs {
		names[g] = true
	}
	targets := runtime.ResolveSkbFallback(spec, names)
	// A glob that names functions only (skb:ip_rcv*) is skipped here, as
	// bpftrace skips a probe it cannot attach; one that matches neither a
	// function nor a tracepoint is a mistake.
	disc, _, discErr := kernel.CachedDiscovery(o.btfFile)
	matches := func(g string) bool {
		return len(targets[g]) > 0 || discErr != nil || len(disc.Match(g)) > 0
	}
	if err := unmatchedSkb(script, matches, stderr); err != nil {
		return codegen.Options{}, nil, err
	}
	var skipped []string
	for _, g := range slices.Sorted(maps.Keys(targets)) {
		if len(targets[g]) == 0 && matches(g) {
			skipped = append(skipped, g)
		}
	}
	if len(reasons) > 0 {
		fmt.Fprintf(stderr, "skbtrace: no function backend works on this kernel, so skb: probes fall back to the tracepoints that carry an sk_buff. %s\n", strings.Join(reasons, "; "))
	}
	for _, g := range skipped {
		fmt.Fprintf(stderr, "skbtrace: skb:%s matches no tracepoint that carries an sk_buff; skipped\n", g)
	}
	for _, g := range slices.Sorted(maps.Keys(targets)) {
		if len(targets[g]) > 0 {
			fmt.Fprintf(stderr, "skbtrace: skb:%s attaches to the %d tracepoints that carry an sk_buff\n", g, len(targets[g]))
		}
	}
	return codegen.Options{SkbTargets: targets}, nil, nil
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

// eventOptions applies --events and --buffer-size: a ring buffer where the
// kernel has one, else a perf buffer, said on stderr by the caller's -v.
func eventOptions(o options, opts *codegen.Options) error {
	switch o.events {
	case "auto":
		opts.PerfEvents = !kernel.HaveRingBuffer()
	case "ringbuf":
		if !kernel.HaveRingBuffer() {
			return fmt.Errorf("--events ringbuf: this kernel has no BPF ring buffer (Linux 5.8 or later); use --events perf")
		}
	case "perf":
		opts.PerfEvents = true
	default:
		return fmt.Errorf("--events takes auto, ringbuf or perf, not %q", o.events)
	}
	if o.bufSize != "" {
		n, err := parseSize(o.bufSize)
		if err != nil || n < 4096 || n > 1<<30 {
			return fmt.Errorf("--buffer-size takes a size from 4K to 1G, such as 64K or 8M, not %q", o.bufSize)
		}
		opts.EventsBytes = int(n)
	}
	return nil
}

// parseSize reads 4096, 64K, 8M or 1G.
func parseSize(s string) (int64, error) {
	mult := int64(1)
	switch strings.ToUpper(s[len(s)-1:]) {
	case "K":
		mult = 1 << 10
	case "M":
		mult = 1 << 20
	case "G":
		mult = 1 << 30
	}
	if mult > 1 {
		s = s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n * mult, err
}

// countProbes counts the programs the script asked for, not track()'s helpers.
func countProbes(out *codegen.Output, st *runtime.AttachStats) int {
	n := 0
	for _, p := range out.Programs {
		// A merged program runs several probes: each counts.
		if p.Helper == "" && !p.KprobeForm() && p.Function == "" && len(p.Functions) == 0 {
			n += p.Probes()
		}
		if st == nil && p.Helper == "" && p.Spec != nil && p.Spec.Spec.Kind != lang.ProbeSkb {
			// A glob's functions, before they attach: what it matched.
			n += len(p.Functions) * p.Probes()
			if p.Function != "" {
				n += p.Probes()
			}
		}
	}
	if st != nil {
		// skb: programs on functions: what attached, not what was tried.
		n += st.Attached
	}
	return n
}

func plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}
