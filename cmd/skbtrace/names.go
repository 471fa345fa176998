package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/skbtrace/skbtrace/runtime/names"
)

// startNames starts the resolver of pod and container names where the
// output names them (--names, not a bpftrace script) or the pod filters
// need it; nil where neither does. Its first refresh is bounded; what it
// cannot reach (no CRI socket, no permission) is said once, with -v, or
// always where the pod filters depend on it.
func startNames(ctx context.Context, o options, bt bool, stderr io.Writer) *names.Resolver {
	scoped := !o.scope.Empty()
	if !scoped && (!o.names || bt) {
		return nil
	}
	warn := func(format string, args ...any) {
		if o.verbose || scoped {
			fmt.Fprintf(stderr, "skbtrace: "+format+"\n", args...)
		}
	}
	r := names.New(names.Options{CRISocket: o.criSocket, Warn: warn})
	if err := r.Start(ctx); err != nil {
		warn("%v", err)
	}
	if o.verbose {
		for _, s := range r.Status() {
			fmt.Fprintf(stderr, "skbtrace: names: %s\n", s)
		}
	}
	return r
}

// describeScope says what the pod filters choose, as given.
func describeScope(s names.Selector) string {
	var parts []string
	add := func(flag string, vals []string) {
		for _, v := range vals {
			parts = append(parts, flag+" "+v)
		}
	}
	add("--pod", s.Pods)
	add("--namespace", s.Namespaces)
	add("--container", s.Containers)
	add("--netns", s.Netns)
	return strings.Join(parts, ", ")
}
