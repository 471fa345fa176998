package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/lang"
)

// compileAndRun parses and checks the script, then dumps or runs it.
func compileAndRun(o options, src *lang.Source, params []string, stdout, stderr io.Writer) int {
	script, err := lang.Parse(src)
	if err != nil {
		return report(stderr, err)
	}
	spec, err := loadBTF(o.btfFile)
	if err != nil {
		fmt.Fprintf(stderr, "skbtrace: %v\n", err)
		return 1
	}
	info, err := check.Check(script, check.Options{BTF: spec, Params: params})
	if err != nil {
		return report(stderr, err)
	}
	if o.dump {
		lang.DumpWith(stdout, script, info.Describe)
		return 0
	}
	fmt.Fprintln(stderr, "skbtrace: the script is valid; code generation is not built yet (use -d to see the tree)")
	return 1
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
	s, err := btf.LoadKernelSpec()
	if err != nil {
		return nil, fmt.Errorf("this kernel has no BTF (/sys/kernel/btf/vmlinux): %w; pass --btf FILE", err)
	}
	return s, nil
}
