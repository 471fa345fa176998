package kernel

import (
	"bytes"
	"path"
	"slices"
	"sync"
)

// traceable is the kernel's list of traceable function names, read once.
var traceable struct {
	once  sync.Once
	names []string
	err   error
}

// TraceableFuncs lists the traceable kernel functions (tracefs'
// available_filter_functions, or kallsyms' text symbols where that is
// unreadable) whose names match a glob, sorted, each once; the tracing
// machinery's own functions are left out. It is what kprobe:GLOB and
// fentry:GLOB attach to.
func TraceableFuncs(glob string) ([]string, error) {
	traceable.once.Do(func() {
		raw, text, _, err := readTraceable()
		if err != nil {
			traceable.err = err
			return
		}
		traceable.names = traceableNames(raw, text)
	})
	var out []string
	for _, n := range traceable.names {
		if ok, _ := path.Match(glob, n); ok {
			out = append(out, n)
		}
	}
	return out, traceable.err
}

// traceableNames parses available_filter_functions ("name [module]" lines)
// or, with text, kallsyms' text symbols.
func traceableNames(raw []byte, text bool) []string {
	var names []string
	eachListed(raw, text, func(name []byte) {
		// kallsyms' local symbols carry suffixes (.cold, .isra.0): not
		// functions a probe can name.
		if len(name) == 0 || bytes.IndexByte(name, '.') >= 0 || tracingMachinery(string(name)) {
			return
		}
		names = append(names, string(name))
	})
	slices.Sort(names)
	return slices.Compact(names)
}

// eachListed calls fn with each function name of available_filter_functions
// ("name [module]" lines) or, with text, of kallsyms' text symbols
// ("ffffffff81000000 T name\t[module]").
func eachListed(raw []byte, text bool, fn func(name []byte)) {
	for len(raw) > 0 {
		line := raw
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			line, raw = raw[:i], raw[i+1:]
		} else {
			raw = nil
		}
		if text {
			i := bytes.IndexByte(line, ' ')
			if i < 0 || i+3 >= len(line) || (line[i+1] != 't' && line[i+1] != 'T') {
				continue
			}
			line = line[i+3:]
		}
		if j := bytes.IndexAny(line, " \t"); j >= 0 {
			line = line[:j]
		}
		fn(line)
	}
}
