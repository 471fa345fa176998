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
	"syscall"
	"time"

	"github.com/cilium/ebpf/btf"

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
	opts, err := skbBackend(o, script, spec, stderr)
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
	sess, err := runtime.Start(out, info, w, runtime.Options{JSON: o.format == "json", Verbose: o.verbose,
		Warn: func(format string, args ...any) { fmt.Fprintf(stderr, "skbtrace: "+format+"\n", args...) }})
	if err != nil {
		fmt.Fprintf(stderr, "skbtrace: %v\n", err)
		return 1
	}
	defer sess.Close()

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

// skbBackend decides how skb: probes attach. Attaching them to kernel
// functions (kprobe-multi, fentry, kprobe) is not built yet, so they use
// the fallback SPEC.md gives for kernels where no function backend works:
// every tracepoint that carries an sk_buff. It says so on stderr.
func skbBackend(o options, script *lang.Script, spec *btf.Spec, stderr io.Writer) (codegen.Options, error) {
	globs := map[string]bool{}
	for _, p := range script.Probes {
		for _, s := range p.Specs {
			if s.Kind == lang.ProbeSkb {
				globs[s.Target] = true
			}
		}
	}
	if len(globs) == 0 {
		return codegen.Options{}, nil
	}
	switch o.backend {
	case "auto", "tracepoint":
	case "kprobe-multi", "kprobe", "fentry":
		return codegen.Options{}, fmt.Errorf("--backend %s: attaching skb: probes to kernel functions is not built yet; use --backend tracepoint", o.backend)
	default:
		return codegen.Options{}, fmt.Errorf("--backend takes auto, kprobe-multi, kprobe, fentry or tracepoint, not %q", o.backend)
	}
	targets := runtime.ResolveSkbFallback(spec, globs)
	for _, g := range slices.Sorted(maps.Keys(targets)) {
		if len(targets[g]) == 0 {
			// As bpftrace does with a probe that matches nothing: warn, and
			// fail only if nothing at all is left to trace.
			fmt.Fprintf(stderr, "skbtrace: skb:%s matches no tracepoint that carries an sk_buff; skipped (attaching to kernel functions is not built yet)\n", g)
			continue
		}
		fmt.Fprintf(stderr, "skbtrace: skb:%s attaches to the %d tracepoints that carry an sk_buff (attaching to kernel functions is not built yet)\n", g, len(targets[g]))
	}
	return codegen.Options{SkbTracepoints: targets}, nil
}
