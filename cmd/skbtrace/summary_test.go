package main

import (
	"strings"
	"testing"

	"github.com/skbtrace/skbtrace/runtime/session"
)

// TestExitSummaryLines checks the summary's text and JSON for each kind:
// the functions not attached by reason (named under -v), what the kernel
// does not count said as such, a kind another part adds, and silence
// where nothing was missed or counted (a bpftrace program's even under -v).
func TestExitSummaryLines(t *testing.T) {
	m := &session.Misses{}
	m.Add(session.Miss{What: session.MissProgramsSkipped, Probe: "kprobe:tcp_*", Reason: "recursion: another BPF program was running on that CPU", Count: 1})
	m.Add(session.Miss{What: session.MissFunctionsSkipped, Reason: "another tracer holds it", Count: 2, Detail: []string{"b_fn", "a_fn"}})
	m.Add(session.Miss{What: session.MissFunctionsSkipped, Reason: "verifier: function with variable args", Count: 1, Detail: []string{"c_fn"}})
	m.Add(session.Miss{What: session.MissCapturesTruncated, Count: 4})
	m.Add(session.Miss{What: session.MissEventsLost, Reason: "the ring buffer was full", Count: 7})
	m.Add(session.Miss{What: "packets_sampled_out", Probe: "skb:*", Reason: "--sample 10", Count: 90})
	m.Add(session.Miss{What: session.MissProgramsSkipped, Reason: "recursion misses of fentry and fexit programs (Linux 5.12 and later count them)", Uncounted: true})

	var w, stderr strings.Builder
	exitSummary(m, options{verbose: true, format: "json", snaplen: 96}, outputKind{}, &w, &stderr)
	wantErr := `skbtrace: 7 events lost: the ring buffer was full
skbtrace: the kernel skipped 1 run of kprobe:tcp_* (recursion: another BPF program was running on that CPU)
skbtrace: 4 captured frames cut to the snap length (--snaplen 96)
skbtrace: 90 packets sampled out of skb:*: --sample 10
skbtrace: 3 functions not attached (2: another tracer holds it; 1: verifier: function with variable args)
skbtrace:   not attached, another tracer holds it: a_fn b_fn
skbtrace:   not attached, verifier: function with variable args: c_fn
skbtrace: not counted on this kernel: recursion misses of fentry and fexit programs (Linux 5.12 and later count them)
`
	if stderr.String() != wantErr {
		t.Errorf("stderr:\n%s\nwant:\n%s", stderr.String(), wantErr)
	}
	wantJSON := `{"data":{"buffer":"ring buffer","events":7},"type":"lost"}
{"data":{"misses":[{"counted":false,"reason":"recursion misses of fentry and fexit programs (Linux 5.12 and later count them)","what":"programs_skipped"},` +
		`{"count":1,"probe":"kprobe:tcp_*","reason":"recursion: another BPF program was running on that CPU","what":"programs_skipped"},` +
		`{"count":7,"reason":"the ring buffer was full","what":"events_lost"},` +
		`{"count":2,"functions":["a_fn","b_fn"],"reason":"another tracer holds it","what":"functions_skipped"},` +
		`{"count":1,"functions":["c_fn"],"reason":"verifier: function with variable args","what":"functions_skipped"},` +
		`{"count":4,"what":"captures_truncated"},` +
		`{"count":90,"probe":"skb:*","reason":"--sample 10","what":"packets_sampled_out"}]},"type":"misses"}
`
	if w.String() != wantJSON {
		t.Errorf("json:\n%s\nwant:\n%s", w.String(), wantJSON)
	}

	// Nothing missed: -v says so; without -v nothing is said, unless the
	// kernel does not count a kind; a bpftrace program's stderr stays its own.
	uncounted := &session.Misses{}
	uncounted.Add(session.Miss{What: session.MissProgramsSkipped, Reason: "r (Linux 6.7 and later count them)", Uncounted: true})
	for _, c := range []struct {
		m       *session.Misses
		verbose bool
		kind    outputKind
		want    string
	}{
		{&session.Misses{}, false, outputKind{}, ""},
		{&session.Misses{}, true, outputKind{}, "skbtrace: nothing missed: every run of the programs counted, no record lost, every function attached, no capture cut\n"},
		{uncounted, false, outputKind{}, "skbtrace: not counted on this kernel: r (Linux 6.7 and later count them)\n"},
		{uncounted, true, outputKind{}, "skbtrace: not counted on this kernel: r (Linux 6.7 and later count them)\nskbtrace: nothing missed that this kernel counts\n"},
		{uncounted, true, outputKind{bpftrace: true}, ""},
	} {
		var w, stderr strings.Builder
		exitSummary(c.m, options{verbose: c.verbose}, c.kind, &w, &stderr)
		if stderr.String() != c.want || w.String() != "" {
			t.Errorf("verbose %v, bpftrace %v: stderr %q, stdout %q; want %q", c.verbose, c.kind.bpftrace, stderr.String(), w.String(), c.want)
		}
	}
}
