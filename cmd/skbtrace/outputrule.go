package main

import (
	"strings"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/stdlib"
)

// The output rule: a program that bpftrace could run as well, one with
// none of skbtrace's packet words (an skb:, skbret:, bpf: or bpfret:
// probe; a packet field such as len, dev, saddr, dport, reason or skb; a
// packet flag: --filter, --timeline, --graph, -w, the pod filters) and not
// in a .st file (skbtrace's own, the bundled tools'), is a bpftrace program and prints what bpftrace 0.26 prints: print() of a
// value as bpftrace prints it, the maps at exit in bpftrace's layout,
// "Attached N probes" on stderr, and -f json in bpftrace's schema. A
// program with one is skbtrace's: print() prints skbtrace's event line,
// the maps skbtrace's layout (a .bt file's in bpftrace's all the same).

// outputKind is which output a program gets.
type outputKind struct {
	// bpftrace: the program is bpftrace's (no packet word).
	bpftrace bool
	// layout: the maps print in bpftrace's layout (a bpftrace program,
	// or any .bt file).
	layout bool
}

// packetNeeds are the needs of skbtrace's packet fields.
const packetNeeds = stdlib.NeedSkb | stdlib.NeedReason | stdlib.NeedEntry | stdlib.NeedProg

// outputFor applies the rule to a script as parsed (its probes, before
// the checker rewrites any) and what the checker learnt of it.
func outputFor(o options, kinds []lang.ProbeKind, s *lang.Script, info *check.Info) outputKind {
	bt := strings.HasSuffix(s.Src.Name, ".bt")
	// A .st file, a bundled tool among them, is written for skbtrace.
	packets := strings.HasSuffix(s.Src.Name, ".st") || o.filter != "" || o.timeline || o.graph || o.write != "" || !o.scope.Empty()
	for _, k := range kinds {
		switch k {
		case lang.ProbeSkb, lang.ProbeSkbRet, lang.ProbeBpf, lang.ProbeBpfRet:
			packets = true
		}
	}
	for _, f := range info.Fields {
		if f.Needs&packetNeeds != 0 {
			packets = true
		}
	}
	return outputKind{bpftrace: !packets, layout: bt || !packets}
}

// probeKinds are the kinds of a parsed script's probes.
func probeKinds(s *lang.Script) []lang.ProbeKind {
	var kinds []lang.ProbeKind
	for _, p := range s.Probes {
		for _, sp := range p.Specs {
			kinds = append(kinds, sp.Kind)
		}
	}
	return kinds
}

// format is the name of runtime/output's format for the program: text,
// json, bpftrace, bpftrace-events, bpftrace-json, timeline[-json],
// graph[-json].
func (k outputKind) format(o options) string {
	switch {
	case o.graph, o.timeline:
		return strings.TrimSuffix(map[bool]string{true: "graph", false: "timeline"}[o.graph]+"-"+o.format, "-text")
	case k.bpftrace && o.format == "json":
		return "bpftrace-json"
	case k.bpftrace:
		return "bpftrace"
	case k.layout && o.format == "text":
		return "bpftrace-events"
	}
	return o.format
}

// synthesized counts the probes the passes added to the script (a
// zero-width span: passes.ExitAfterBegin's), which bpftrace's count of
// attached probes does not have.
func synthesized(s *lang.Script) int {
	n := 0
	for _, p := range s.Probes {
		if p.At.Start == p.At.End {
			n += len(p.Specs)
		}
	}
	return n
}
