package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/lang/types"
	"github.com/skbtrace/skbtrace/runtime/kernel"
	"github.com/skbtrace/skbtrace/runtime/output"
	"github.com/skbtrace/skbtrace/runtime/rules"
)

// startRules starts the namer of the rules and actions behind drops where
// the script prints rule() (whydrop) or keys a map by it (dropcount): nil
// where it does neither. --nftrace
// without rule() says that it does nothing.
func startRules(o options, out *codegen.Output, stderr io.Writer) (*rules.Namer, error) {
	if !usesRule(out) {
		if o.nftrace {
			fmt.Fprintln(stderr, "skbtrace: --nftrace does nothing here: the script prints no rule() (whydrop does) and keys no map by it (dropcount does)")
		}
		return nil, nil
	}
	nftrace := o.nftrace
	if !dropReasons() {
		fmt.Fprintln(stderr, "skbtrace: rule(): this kernel's kfree_skb gives no drop reason (Linux 5.17 on): which rule or action dropped a packet cannot be told, and is not printed")
		if nftrace {
			// No drop would be known to be netfilter's: the ruleset is
			// left alone.
			fmt.Fprintln(stderr, "skbtrace: --nftrace: no table added: without drop reasons no drop is known to be netfilter's")
			nftrace = false
		}
	}
	n, err := rules.New(rules.Options{Nftrace: nftrace, Netns: o.scope.Netns, Warn: func(s string) { fmt.Fprintln(stderr, "skbtrace: "+s) }})
	if err != nil {
		return nil, fmt.Errorf("--nftrace: %w", err)
	}
	if t := n.Nftrace(); t != nil {
		nets, owner := t.Namespaces()
		how := "an owner table: the kernel removes it when skbtrace ends, even by SIGKILL"
		if !owner {
			how = "removed at exit"
		}
		fmt.Fprintf(stderr, "skbtrace: --nftrace: table inet %s%d in %d network %s with an nftables ruleset (%s)\n", rules.TablePrefix, os.Getpid(), nets, map[bool]string{true: "namespace", false: "namespaces"}[nets == 1], how)
	}
	return n, nil
}

// usesRule reports whether a record prints a rule() value or a map's
// key has one (dropcount's rule label).
func usesRule(out *codegen.Output) bool {
	if out == nil {
		return false
	}
	for _, l := range out.MapLayouts {
		if output.HasRuleKey(l) {
			return true
		}
	}
	for _, ev := range out.Events {
		for _, a := range ev.Args {
			if a.Type.Kind == types.Tuple && a.Type.Fmt == types.FmtRule {
				return true
			}
		}
	}
	return false
}

// dropReasons reports whether the kfree_skb tracepoint carries the drop
// reason (Linux 5.17 on), which rule() tells netfilter's and tc's drops by;
// true where its format cannot be read (the trace says what it can).
func dropReasons() bool {
	dir, _, err := kernel.Tracefs()
	if err != nil {
		return true
	}
	format, err := os.ReadFile(filepath.Join(dir, "events/skb/kfree_skb/format"))
	if err != nil {
		return true
	}
	return strings.Contains(string(format), " reason;")
}
