package pipeline

import (
	"slices"
	"strings"
	"testing"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/internal/testkit"
	"github.com/skbtrace/skbtrace/lang"
)

// config is a run's configuration as the command line's defaults make it,
// what the pipeline says gathered in said.
func config(said *[]string) Config {
	return Config{Backend: "auto", Events: "auto", Snaplen: codegen.DefaultSnaplen,
		Warn: func(m string) { *said = append(*said, m) }}
}

// TestPrepareFilter takes a script through Prepare with --filter on this
// kernel: its skb probe gets the filter's pcap() in its predicate, the
// tree parsed is left as it was, the programs compile, and what was
// decided of skb: probes (a backend, or the tracepoint fallback) is said.
func TestPrepareFilter(t *testing.T) {
	testkit.KernelBTF(t)
	var said []string
	cfg := config(&said)
	cfg.Filter = "udp dst port 9"
	p := New(cfg)
	defer p.Close()
	if err := p.Parse(&lang.Source{Name: "t.st", Text: "skb:* /len > 0/ { print(len) }"}); err != nil {
		t.Fatal(err)
	}
	parsed := p.Script
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	if err := p.Compile(); err != nil {
		t.Fatal(err)
	}
	if parsed.Probes[0].Pred.(*lang.BinaryExpr).Op != ">" {
		t.Errorf("the parsed tree changed: %+v", parsed.Probes[0].Pred)
	}
	and, ok := p.Script.Probes[0].Pred.(*lang.BinaryExpr)
	if !ok || and.Op != "&&" {
		t.Fatalf("the checked script's predicate is %T %+v, want the filter ANDed in", p.Script.Probes[0].Pred, p.Script.Probes[0].Pred)
	}
	if len(p.Output.Programs) == 0 || p.Probes(nil) == 0 {
		t.Errorf("%d programs, %d probes", len(p.Output.Programs), p.Probes(nil))
	}
	if !slices.ContainsFunc(said, func(m string) bool {
		return strings.HasPrefix(m, "skb: probes attach with ") || strings.HasPrefix(m, "no function backend works on this kernel")
	}) {
		t.Errorf("said %q: nothing of how skb: probes attach", said)
	}
}

// TestPrepareErrors checks the errors of scripts --filter and -w cannot
// apply to, and a script's own, positioned.
func TestPrepareErrors(t *testing.T) {
	testkit.KernelBTF(t)
	for _, c := range []struct {
		text, filter string
		capture      bool
		err          string
	}{
		{"BEGIN { exit() }", "udp", false, "--filter: no probe of the script has an skb to filter"},
		{"BEGIN { exit() }", "", true, "-w: no probe of the script has an skb to capture"},
		{"skb:* { capture() }", "", false, "capture() writes to the file of -w FILE: give one"},
		{"BEGIN { print(lenn) }", "", false, "t.st:1:15: "},
	} {
		var said []string
		cfg := config(&said)
		cfg.Filter, cfg.Capture = c.filter, c.capture
		p, err := Prepare(cfg, &lang.Source{Name: "t.st", Text: c.text})
		p.Close()
		if err == nil || !strings.HasPrefix(err.Error(), c.err) {
			t.Errorf("%s (filter %q, capture %v): %v, want %q", c.text, c.filter, c.capture, err, c.err)
		}
	}
}

// TestListOrder checks that -l's notes come where they belong: after the
// skb: functions they speak of, and that a pattern matching nothing is an
// error after no line.
func TestListOrder(t *testing.T) {
	testkit.KernelBTF(t)
	var log []string
	cfg := Config{Backend: "auto", Warn: func(m string) { log = append(log, "note: "+m) }}
	if err := List(cfg, "skb:ip_rcv*", func(l string) { log = append(log, l) }); err != nil {
		t.Fatal(err)
	}
	if len(log) == 0 || log[0] != "skb:ip_rcv" {
		t.Fatalf("listing %q, want skb:ip_rcv first", log)
	}
	for i, l := range log {
		if strings.HasPrefix(l, "note: ") && i != len(log)-1 {
			t.Errorf("note %q before the line %q", l, log[i+1])
		}
	}
	log = nil
	err := List(cfg, "struct no_such_struct_here", func(l string) { log = append(log, l) })
	if err == nil || err.Error() != `no struct matches "no_such_struct_here" in the kernel's BTF` || len(log) != 0 {
		t.Errorf("no such struct: %v, lines %q", err, log)
	}
}
