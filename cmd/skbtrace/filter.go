package main

import (
	"strings"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/pcapfilter"
)

// filterLine is what --filter alone prints for each hop of a matching
// packet, as pwru does: the device, the namespace, the mark, and the packet
// decoded as tcpdump prints it.
const filterLine = "print(dev, netns, mark, pkt)"

// checkFilter compiles --filter on its own, so that its errors point into
// it, not into the script it becomes part of.
func checkFilter(filter string) error {
	src := &lang.Source{Name: "--filter", Text: filter}
	_, err := pcapfilter.Compile(filter, src.PosAt)
	if fe, ok := err.(*pcapfilter.Error); ok {
		d := &lang.Diagnostics{Src: src}
		d.Add(lang.Span{Start: src.PosAt(fe.Off), End: src.PosAt(fe.End)}, fe.Hint, "%s", fe.Msg)
		return d
	}
	return err
}

// quote writes a string literal of the script language.
func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`).Replace(s) + `"`
}

// filterScript is the program of --filter without a script: every skb
// function, each hop of a matching packet a line, or with -w a frame.
func filterScript(filter string, write bool) *lang.Source {
	body := filterLine
	if write {
		body = "capture()"
	}
	return &lang.Source{Name: "--filter", Text: "skb:* /pcap(" + quote(filter) + ")/ { " + body + " }\n"}
}

// addCapture makes every probe with an skb start with capture(), for -w:
// every event of an skb probe is a frame. It reports whether it changed any.
func addCapture(script *lang.Script, info *check.Info) bool {
	changed := false
	for _, p := range script.Probes {
		if pi := info.Probes[p]; pi == nil || !pi.Skb || callsCapture(p) {
			continue
		}
		at := p.Body.At
		call := &lang.ExprStmt{At: at, X: &lang.CallExpr{At: at, Name: "capture", NameSpan: at}}
		p.Body.Stmts = append([]lang.Stmt{call}, p.Body.Stmts...)
		changed = true
	}
	return changed
}

// callsCapture reports whether a node calls capture() itself.
func callsCapture(n lang.Node) bool {
	found := false
	lang.Inspect(n, func(n lang.Node) bool {
		if c, ok := n.(*lang.CallExpr); ok && c.Name == "capture" {
			found = true
		}
		return !found
	})
	return found
}

// addFilter ANDs pcap(filter) into the predicate of every probe that has
// an skb (as the checker found); it reports whether it changed any.
func addFilter(script *lang.Script, info *check.Info, filter string) bool {
	changed := false
	for _, p := range script.Probes {
		if pi := info.Probes[p]; pi == nil || !pi.Skb {
			continue
		}
		at := p.At
		var x lang.Expr = &lang.CallExpr{At: at, Name: "pcap", NameSpan: at, Args: []lang.Expr{&lang.StrLit{At: at, Value: filter}}}
		if p.Pred != nil {
			x = &lang.BinaryExpr{At: p.Pred.Span(), Op: "&&", OpSpan: at, X: x, Y: &lang.ParenExpr{At: p.Pred.Span(), X: p.Pred}}
		}
		p.Pred = x
		changed = true
	}
	return changed
}

// timelineScript is the program of --timeline with --filter and no
// script: every hop of a matching packet, followed with track() where the
// filter would no longer match it, and the drop's reason and location.
func timelineScript(filter string) *lang.Source {
	f := quote(filter)
	return &lang.Source{Name: "--timeline", Text: "skb:* /pcap(" + f + ")/ { track(); print(dev, netns, len) }\n" +
		"tracepoint:skb:kfree_skb /pcap(" + f + ")/ { print(reason, ksym(location)) }\n"}
}
