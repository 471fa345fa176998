package pipeline

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/scripts"
)

// Request is what a command line says of the script to run.
type Request struct {
	// Program is -e's; ProgramSet is -e given, even empty.
	Program    string
	ProgramSet bool
	// Args are the arguments after the flags: a script file or a bundled
	// tool and its positional parameters, or --graph's selection.
	Args []string
	// Filter is --filter; Timeline, Graph and Capture are --timeline,
	// --graph and -w; BPFHops is --bpf-hops.
	Filter                            string
	Timeline, Graph, Capture, BPFHops bool
	// Scoped is set by the pod filters (--pod...): alone, they trace
	// every hop of their pods' packets, as --filter ScopedFilter does.
	Scoped bool
}

// ScopedFilter is the filter the pod filters trace with where nothing else
// says what to trace: every packet of the pods (IPv4, IPv6 and ARP).
const ScopedFilter = "ip or ip6 or arp"

// ScriptFor finds the script a request runs: -e's, a file's or a bundled
// tool's (its parameters in Source.Params), or the one --graph, --filter
// or --timeline writes without one (with BPF programs as hops, which
// warn hears about). It returns the request as it then stands: Filter
// empty where the script written has it, Graph set where the tool prints
// a graph. src is nil where the request names no script: the caller says
// how to use it.
func ScriptFor(r Request, warn func(string)) (src *lang.Source, _ Request, err error) {
	if r.Scoped && r.Filter == "" && !r.ProgramSet && len(r.Args) == 0 && !r.Graph {
		r.Filter = ScopedFilter
	}
	if r.Filter != "" {
		if err := CheckFilter(r.Filter); err != nil {
			return nil, r, err
		}
	}
	if r.Graph && r.Timeline {
		return nil, r, errors.New("--graph and --timeline group events in two ways: choose one")
	}
	hops := func() Hops { return BPFHops(r.BPFHops, r.Filter, warn) }
	if args := r.Args; r.Graph && !r.ProgramSet && (len(args) == 0 || isSelection(args[0])) {
		sel := ""
		if len(args) > 1 {
			return nil, r, fmt.Errorf("--graph takes one selection, and flags go before it (-c CMD --graph 'skb:ip_*'), not %q", args[1:])
		}
		if len(args) > 0 {
			sel = args[0]
		}
		src, err = GraphScript(sel, r.Filter, hops)
		r.Filter = ""
		return src, r, err
	}
	src, err = scriptSource(r)
	if err != nil {
		return nil, r, err
	}
	if t, ok := toolOf(r.Args); ok && t.Graph && !r.ProgramSet {
		r.Graph = true
	}
	switch {
	case src == nil && r.Filter != "" && r.Timeline:
		src, r.Filter = TimelineScript(r.Filter, hops()), ""
	case src == nil && r.Filter != "":
		src, r.Filter = FilterScript(r.Filter, r.Capture, !r.Scoped, hops()), ""
	case src == nil && r.Timeline:
		return nil, r, errors.New("--timeline groups the packets of --filter 'FILTER', or the print() events of a script: give one")
	}
	return src, r, nil
}

// scriptSource finds the program: -e, a file, or a bundled tool. The
// remaining arguments are the positional parameters.
func scriptSource(r Request) (*lang.Source, error) {
	args := r.Args
	if r.ProgramSet {
		return &lang.Source{Name: "cmdline", Text: r.Program, Params: args}, nil
	}
	if len(args) == 0 {
		return nil, nil
	}
	name := args[0]
	if text, err := os.ReadFile(name); err == nil {
		return &lang.Source{Name: name, Text: string(text), Params: args[1:]}, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if t, ok := scripts.Lookup(name); ok {
		return &lang.Source{Name: t.Name + ".st", Text: t.Text, Params: args[1:]}, nil
	}
	if strings.HasSuffix(name, ".bt") {
		// A bpftrace script's name: bpftrace's words.
		return nil, fmt.Errorf("ERROR: failed to open file '%s': No such file or directory", name)
	}
	return nil, fmt.Errorf("no script file or bundled tool named %q (see --tools)", name)
}

// isSelection reports whether --graph's argument is a selection of skb:
// probes rather than a script file or a tool.
func isSelection(arg string) bool {
	_, err := os.Stat(arg)
	return strings.Contains(arg, ":") && err != nil
}

// toolOf is the bundled tool the arguments run, if any: one that is not a
// file of that name.
func toolOf(args []string) (scripts.Tool, bool) {
	if len(args) == 0 {
		return scripts.Tool{}, false
	}
	if _, err := os.Stat(args[0]); err == nil {
		return scripts.Tool{}, false
	}
	return scripts.Lookup(args[0])
}
