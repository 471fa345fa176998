package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"os/signal"
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
)

// trace compiles, attaches and traces until Ctrl-C, SIGTERM, --duration or
// the end of -c's command; then it detaches and prints the maps.
func trace(o options, script *lang.Script, info *check.Info, spec *btf.Spec, stdout, stderr io.Writer) int {
	var limit time.Duration
	if o.duration != "" {
		d, err := time.ParseDuration(o.duration)
		if err != nil || d <= 0 {
			fmt.Fprintf(stderr, "skbtrace: --duration takes a positive duration such as 10s or 500ms, not %q\n", o.duration)
			return 1
		}
		limit = d
	}
	opts, funcs, err := skbBackend(o, script, spec, stderr)
	if err == nil {
		err = eventOptions(o, &opts)
	}
	if err != nil {
		fmt.Fprintf(stderr, "skbtrace: %v\n", err)
		return 1
	}
	out, err := codegen.Compile(script, info, opts)
	if err != nil {
		return report(stderr, err)
	}
	if len(out.Programs) == 0 {
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
	if funcs != nil && isTerminal(stderr) {
		funcs.Progress = stderr
	}
	started := time.Now()
	sess, err := runtime.Start(out, info, w, runtime.Options{JSON: o.format == "json", Verbose: o.verbose, Funcs: funcs,
		Warn: func(format string, args ...any) { fmt.Fprintf(stderr, "skbtrace: "+format+"\n", args...) }})
	if err != nil {
		fmt.Fprintf(stderr, "skbtrace: %v\n", err)
		return 1
	}
	defer sess.Close()
	if st := sess.FuncStats(); st != nil {
		if sum := st.Summary(); sum != "" {
			fmt.Fprintf(stderr, "skbtrace: %s\n", sum)
		}
		if o.verbose {
			fmt.Fprintf(stderr, "skbtrace: %d functions attached with %s in %v\n", st.Attached, st.Backend, st.Elapsed.Round(time.Millisecond))
		}
	}
	if o.verbose {
		fmt.Fprintf(stderr, "skbtrace: loaded and attached in %v\n", time.Since(started).Round(time.Millisecond))
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	n := 0
	for _, p := range out.Programs {
		if p.Helper == "" {
			n++
		}
	}
	noun := "probes"
	if n == 1 {
		noun = "probe"
	}
	fmt.Fprintf(stderr, "skbtrace: tracing %d %s; Ctrl-C to end\n", n, noun)
	// exit() in the script ends tracing like Ctrl-C.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-sess.Exited():
			cancel()
		case <-ctx.Done():
		}
	}()
	status := 0
	if o.command != "" {
		status = runCommand(ctx, o.command, stderr)
	} else {
		<-ctx.Done()
	}
	if err := sess.Detach(); err != nil {
		fmt.Fprintf(stderr, "skbtrace: reading events: %v\n", err)
		status = 1
	}
	if n := sess.Lost(); n > 0 {
		fmt.Fprintf(stderr, "skbtrace: %d events lost: the ring buffer was full\n", n)
	}
	if err := sess.PrintMaps(w); err != nil {
		fmt.Fprintf(stderr, "skbtrace: %v\n", err)
		return 1
	}
	return status
}

// runCommand runs -c's command under sh and waits for it, or for the end of
// tracing, whichever comes first.
func runCommand(ctx context.Context, command string, stderr io.Writer) int {
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, stderr, stderr
	if err := cmd.Run(); err != nil && ctx.Err() == nil {
		if _, ok := err.(*exec.ExitError); !ok {
			fmt.Fprintf(stderr, "skbtrace: -c: %v\n", err)
			return 1
		}
	}
	return 0
}

// skbBackend decides how skb: probes attach: to the kernel functions that
// discovery finds, with the backend --backend names or the fastest that
// works (kprobe-multi, fentry, kprobe); where none works, to every
// tracepoint that carries an sk_buff, which it says on stderr.
func skbBackend(o options, script *lang.Script, spec *btf.Spec, stderr io.Writer) (codegen.Options, *runtime.FuncAttach, error) {
	globs := map[string]bool{}
	for _, p := range script.Probes {
		for _, s := range p.Specs {
			if s.Kind == lang.ProbeSkb {
				globs[s.Target] = true
			}
		}
	}
	if len(globs) == 0 {
		return codegen.Options{}, nil, nil
	}
	var disc *runtime.Discovery
	probe := func(b runtime.Backend) error {
		if disc == nil {
			d, _, err := runtime.CachedDiscovery(o.btfFile)
			if err != nil {
				return err
			}
			disc = d
		}
		if len(disc.Funcs) == 0 {
			return fmt.Errorf("no traceable function takes a struct sk_buff *")
		}
		return runtime.ProbeBackend(b, probeTarget(disc))
	}
	backend, reasons, err := runtime.ChooseBackend(o.backend, probe)
	if err != nil {
		return codegen.Options{}, nil, err
	}
	if backend == runtime.BackendTracepoint {
		return tracepointFallback(o, globs, reasons, spec, stderr)
	}
	opts := codegen.Options{SkbTargets: map[string][]codegen.SkbTarget{}, SkbKprobeArgs: map[string][]int{}}
	fa := &runtime.FuncAttach{Backend: backend, Funcs: map[string][]runtime.SkbFunc{}}
	for _, g := range slices.Sorted(maps.Keys(globs)) {
		fns := disc.Match(g)
		if len(fns) == 0 {
			fmt.Fprintf(stderr, "skbtrace: skb:%s matches no traceable function with a struct sk_buff * argument; skipped\n", g)
			continue
		}
		fa.Funcs[g] = fns
		if backend == runtime.BackendFentry {
			var tgs []codegen.SkbTarget
			for _, f := range fns {
				tgs = append(tgs, codegen.SkbTarget{Name: f.Name, Fentry: true, SkbArg: f.SkbArg})
			}
			opts.SkbTargets[g] = tgs
			continue
		}
		seen := map[int]bool{}
		for _, f := range fns {
			if !seen[f.SkbArg] && f.SkbArg < codegen.SkbArgs {
				seen[f.SkbArg] = true
				opts.SkbKprobeArgs[g] = append(opts.SkbKprobeArgs[g], f.SkbArg)
			}
		}
		slices.Sort(opts.SkbKprobeArgs[g])
	}
	return opts, fa, nil
}

// probeTarget is the function the backends are tried on: one every kernel
// has where possible.
func probeTarget(d *runtime.Discovery) string {
	for _, f := range d.Funcs {
		if f.Name == "kfree_skbmem" || f.Name == "ip_rcv" {
			return f.Name
		}
	}
	return d.Funcs[0].Name
}

// tracepointFallback attaches skb: probes to every tracepoint that carries
// an sk_buff, saying why on stderr.
func tracepointFallback(o options, globs map[string]bool, reasons []string, spec *btf.Spec, stderr io.Writer) (codegen.Options, *runtime.FuncAttach, error) {
	if len(reasons) > 0 {
		fmt.Fprintf(stderr, "skbtrace: no function backend works on this kernel, so skb: probes fall back to the tracepoints that carry an sk_buff. %s\n", strings.Join(reasons, "; "))
	}
	targets := runtime.ResolveSkbFallback(spec, globs)
	for _, g := range slices.Sorted(maps.Keys(targets)) {
		if len(targets[g]) == 0 {
			// As bpftrace does with a probe that matches nothing: warn, and
			// fail only if nothing at all is left to trace.
			fmt.Fprintf(stderr, "skbtrace: skb:%s matches no tracepoint that carries an sk_buff; skipped\n", g)
			continue
		}
		fmt.Fprintf(stderr, "skbtrace: skb:%s attaches to the %d tracepoints that carry an sk_buff\n", g, len(targets[g]))
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
		opts.PerfEvents = !runtime.HaveRingBuffer()
	case "ringbuf":
		if !runtime.HaveRingBuffer() {
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
