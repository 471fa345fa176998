package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/passes"
	"github.com/skbtrace/skbtrace/runtime"
	"github.com/skbtrace/skbtrace/runtime/kernel"
)

// compileAndRun parses and checks the script, then dumps or runs it.
func compileAndRun(o options, src *lang.Source, params []string, stdout, stderr io.Writer) int {
	resumeGC := pauseGC()
	defer resumeGC()
	kt := &kernelTypes{file: o.btfFile}
	defer kt.save()
	script, info, status := kt.check(o, src, params, stderr)
	if script == nil {
		return status
	}
	if o.dump {
		lang.DumpWith(stdout, script, info.Describe)
		return dumpCode(o, script, info, kt, stdout, stderr)
	}
	return trace(o, script, info, kt, resumeGCLater(resumeGC), stdout, stderr)
}

// checkScript checks a script with the kernel types that types returns,
// prunes it to what this kernel runs (check.Prune), then applies --filter
// and -w (passes.Filter, passes.Capture). The script given is not changed.
// It returns the script to compile and what the checker learnt of it, or
// a nil script and the exit status.
func checkScript(o options, script *lang.Script, params []string, types func() (check.BTF, error), stderr io.Writer) (*lang.Script, *check.Info, int) {
	spec, err := types()
	if err != nil {
		fmt.Fprintf(stderr, "skbtrace: %v\n", err)
		return nil, nil, 1
	}
	copts := checkOptions(spec, params, stderr)
	info, err := check.Check(script, copts)
	if err == nil {
		script, info, err = check.Prune(script, info, copts)
	}
	if err != nil {
		return nil, nil, report(stderr, err)
	}
	// --filter and -w change the script's skb probes: check it again.
	// Which probes have an skb, as the checker found, by the probe's span:
	// the copies the passes make of a probe keep it.
	skbAt := map[lang.Span]bool{}
	for p, pi := range info.Probes {
		skbAt[p.At] = pi.Skb
	}
	skb := func(p *lang.Probe) bool { return skbAt[p.At] }
	changed := false
	if o.filter != "" {
		if script, changed = passes.Filter(script, o.filter, skb); !changed {
			fmt.Fprintln(stderr, "skbtrace: --filter: no probe of the script has an skb to filter")
			return nil, nil, 1
		}
	}
	switch captures := passes.CallsCapture(script); {
	case o.write == "" && captures:
		fmt.Fprintln(stderr, "skbtrace: capture() writes to the file of -w FILE: give one")
		return nil, nil, 1
	case o.write != "" && !captures:
		var added bool
		if script, added = passes.Capture(script, skb); !added {
			fmt.Fprintln(stderr, "skbtrace: -w: no probe of the script has an skb to capture")
			return nil, nil, 1
		}
		changed = true
	case o.write != "":
		changed = true
	}
	if changed {
		// The notes of what Prune dropped stay: the script checked again
		// no longer has it.
		notes := info.Notes
		if info, err = check.Check(script, copts); err != nil {
			return nil, nil, report(stderr, err)
		}
		for _, n := range info.Notes {
			if !slices.Contains(notes, n) {
				notes = append(notes, n)
			}
		}
		info.Notes = notes
	}
	for _, n := range info.Notes {
		fmt.Fprintf(stderr, "skbtrace: NOTE: %s\n", n)
	}
	return script, info, 0
}

// report prints a script's diagnostics, or any other error, and returns the
// exit status.
func report(w io.Writer, err error) int {
	var d *lang.Diagnostics
	if errors.As(err, &d) {
		fmt.Fprint(w, d.Error())
		return 1
	}
	fmt.Fprintf(w, "skbtrace: %v\n", err)
	return 1
}

func loadBTF(file string) (*btf.Spec, error) {
	if file != "" {
		s, err := btf.LoadSpec(file)
		if err != nil {
			return nil, fmt.Errorf("load BTF from %s: %w", file, err)
		}
		return s, nil
	}
	s, err := kernel.BTF()
	if err != nil {
		return nil, fmt.Errorf("this kernel has no BTF (/sys/kernel/btf/vmlinux): %w; pass --btf FILE", err)
	}
	return s, nil
}

// dumpCode prints each program's instructions as trace would load them (the
// backend auto or --backend chooses, tracepoints included, --filter and -w
// applied) and, where the kernel lets them load, how many instructions the
// verifier processed. Where no backend of this kernel would run the
// script, it says why and prints the programs as compiled for kprobes.
func dumpCode(o options, script *lang.Script, info *check.Info, kt *kernelTypes, stdout, stderr io.Writer) int {
	out, _, err := compileFor(o, script, info, kt.whole, stderr)
	if err != nil {
		// No backend here runs it (no kprobes, say): the code is still
		// worth reading, as compiled for kprobes, with why it would not run.
		generic, gerr := codegen.Compile(script, info, codegen.Options{Ksym: kernel.KsymAddr, HaveFuncIP: kernel.HaveFuncIPHelper, HaveHelper: kernel.HaveHelper})
		if gerr != nil {
			return report(stderr, err)
		}
		fmt.Fprintln(stderr, "skbtrace: -d: this kernel would not trace it as it is, so the programs below are as compiled for kprobes:")
		report(stderr, err)
		out = generic
	}
	verified := map[string]uint32{}
	if coll, err := runtime.LoadWith(out, o.verbose, kt.typeIDs()); err != nil {
		fmt.Fprintf(stderr, "skbtrace: %v\n", err)
	} else {
		verified = runtime.Verified(coll)
		coll.Close()
	}
	for _, p := range out.Programs {
		what := "track() helper on " + p.Prog.AttachTo
		switch {
		case len(p.Merged) > 0:
			// Probes on one attach point share a program.
			names := make([]string, len(p.Merged))
			for i, m := range p.Merged {
				names[i] = m.Name
			}
			what = fmt.Sprintf("%s, %d probes in one program (%s)", p.Spec.Spec.Text, len(p.Merged), strings.Join(names, ", "))
		case p.Spec != nil:
			what = p.Spec.Spec.Text
		case p.Helper == codegen.HelperEntry:
			what = "skbret: entry, keeps the skb and time for the return"
		}
		fmt.Fprintf(stdout, "\nprogram %s: %s (%s, %d instructions", p.Name, what, p.Prog.Type, len(p.Prog.Instructions))
		if n, ok := verified[p.Name]; ok {
			fmt.Fprintf(stdout, ", verifier processed %d", n)
		}
		fmt.Fprintf(stdout, ")\n%v", p.Prog.Instructions)
	}
	return 0
}

// checkOptions are the checker's options for this kernel: its BTF, the
// positional parameters, and tracefs formats for classic tracepoints.
func checkOptions(spec check.BTF, params []string, stderr io.Writer) check.Options {
	return runtime.CheckOptions(spec, params, func(msg string) { fmt.Fprintf(stderr, "skbtrace: %s\n", msg) })
}
