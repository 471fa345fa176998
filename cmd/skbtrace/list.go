package main

import (
	"fmt"
	"io"
	"os"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/runtime/pipeline"
)

// listProbes is -l: the probes a pattern matches (patterns separated by
// commas; none or * every probe of every kind), or, where the argument is
// a script file, as bpftrace's -l FILE, the probes of that script.
func listProbes(cfg pipeline.Config, pattern string, stdout io.Writer) error {
	emit := func(l string) { fmt.Fprintln(stdout, l) }
	if st, err := os.Stat(pattern); err == nil && st.Mode().IsRegular() {
		b, err := os.ReadFile(pattern)
		if err != nil {
			return err
		}
		return pipeline.ListScript(cfg, &lang.Source{Name: pattern, Text: string(b)}, emit)
	}
	return pipeline.List(cfg, pattern, emit)
}
