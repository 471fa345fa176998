package pipeline

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/skbtrace/skbtrace/lang"
)

// TestScriptFor checks which script a command line runs: -e's with the
// arguments as parameters, a bundled tool's (funcgraph turning --graph
// on), the scripts --filter, --timeline and --graph write (taking
// --filter in), and the errors of requests that cannot run, a bad filter's
// positioned in it.
func TestScriptFor(t *testing.T) {
	for _, c := range []struct {
		name        string
		r           Request
		src, prefix string
		params      []string
		filter      string
		graph       bool
		err         string
	}{
		{name: "-e", r: Request{Program: "BEGIN { exit() }", ProgramSet: true, Args: []string{"a", "b"}},
			src: "cmdline", prefix: "BEGIN { exit() }", params: []string{"a", "b"}},
		{name: "-e with --filter", r: Request{Program: "skb:* { print(len) }", ProgramSet: true, Filter: "udp"},
			src: "cmdline", prefix: "skb:*", filter: "udp"},
		{name: "tool", r: Request{Args: []string{"dropwatch", "x"}}, src: "dropwatch.st", prefix: "", params: []string{"x"}},
		{name: "graph tool", r: Request{Args: []string{"funcgraph"}}, src: "funcgraph.st", graph: true},
		{name: "--filter", r: Request{Filter: "udp dst port 9"}, src: "--filter", prefix: `skb:* /pcap("udp dst port 9")/ { track(); print(dev, netns, mark, pkt) }`},
		{name: "--filter -w", r: Request{Filter: "udp", Capture: true}, src: "--filter", prefix: `skb:* /pcap("udp")/ { track(); capture() }`},
		{name: "--timeline", r: Request{Filter: "udp", Timeline: true}, src: "--timeline", prefix: `skb:* /pcap("udp")/ { track();`},
		{name: "--graph", r: Request{Graph: true, Args: []string{"skb:ip_rcv"}}, src: "--graph", prefix: "skb:ip_rcv { track(); print(skb) }", graph: true},
		{name: "pod filters alone", r: Request{Scoped: true}, src: "--filter", prefix: `skb:* /pcap("ip or ip6 or arp")/ { print(dev, netns, mark, pkt) }`},
		{name: "pod filters --filter", r: Request{Scoped: true, Filter: "tcp"}, src: "--filter", prefix: `skb:* /pcap("tcp")/ { print(dev, netns, mark, pkt) }`},
		{name: "pod filters with a tool", r: Request{Scoped: true, Args: []string{"dropwatch"}}, src: "dropwatch.st"},
		{name: "nothing", r: Request{}},
		{name: "--timeline alone", r: Request{Timeline: true}, err: "--timeline groups the packets of --filter 'FILTER', or the print() events of a script: give one"},
		{name: "--graph --timeline", r: Request{Graph: true, Timeline: true}, err: "--graph and --timeline group events in two ways: choose one"},
		{name: "--graph two", r: Request{Graph: true, Args: []string{"skb:a", "skb:b"}}, err: `--graph takes one selection, and flags go before it (-c CMD --graph 'skb:ip_*'), not ["skb:b"]`},
		{name: "no such tool", r: Request{Args: []string{"no_such_tool"}}, err: `no script file or bundled tool named "no_such_tool" (see --tools)`},
		{name: "bad filter", r: Request{Filter: "udp port"}, err: "--filter:1:"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var said []string
			src, r, err := ScriptFor(c.r, func(m string) { said = append(said, m) })
			if c.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				if d := (*lang.Diagnostics)(nil); c.name == "bad filter" && !errors.As(err, &d) {
					t.Errorf("a bad filter's error is %T, not positioned diagnostics", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.src == "" {
				if src != nil {
					t.Fatalf("a script where none was asked for: %+v", src)
				}
				return
			}
			if src == nil || src.Name != c.src || !strings.HasPrefix(src.Text, c.prefix) || !slices.Equal(src.Params, c.params) {
				t.Fatalf("script %+v, want %s starting %q with parameters %q", src, c.src, c.prefix, c.params)
			}
			if r.Filter != c.filter || r.Graph != c.graph {
				t.Errorf("request after: filter %q graph %v, want %q %v", r.Filter, r.Graph, c.filter, c.graph)
			}
			if len(said) > 0 {
				t.Errorf("said %q without --bpf-hops", said)
			}
		})
	}
}
