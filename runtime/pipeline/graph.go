package pipeline

import (
	"fmt"
	"strings"

	"github.com/skbtrace/skbtrace/lang"
)

// GraphScript is the program of --graph without a script: the entries of
// the selection's functions and their returns, nested per skb and CPU by
// the printer. A selection is what --graph's argument says: skb: probes
// and a predicate, `skb:ip_*,skb:nf_* /mark == 1/` (skb:* where empty);
// --filter is ANDed with its predicate. The first entry a packet matches
// starts following it (track()): the calls inside it print whatever their
// predicate says, and a return prints where its skb is followed. Where the
// selection has skb:* (or is empty), the BPF programs hops asks for are
// calls too, their verdicts their return values: tc programs under the
// predicate, XDP programs under --filter alone (a frame has no skb
// fields), none where the selection has a predicate of its own.
func GraphScript(sel, filter string, hopsFor func() Hops) (*lang.Source, error) {
	specs, pred := sel, ""
	if i := strings.IndexByte(sel, '/'); i >= 0 {
		specs, pred = sel[:i], strings.TrimSpace(sel[i:])
		if len(pred) < 2 || !strings.HasSuffix(pred, "/") {
			return nil, fmt.Errorf("--graph: the predicate of %q is not closed: write skb:GLOB /PREDICATE/", sel)
		}
		pred = strings.TrimSpace(pred[1 : len(pred)-1])
	}
	var entries, returns []string
	all := false
	for _, s := range strings.Split(specs, ",") {
		s = strings.TrimSpace(s)
		if s == "" && len(strings.Split(specs, ",")) == 1 {
			s = "skb:*"
		}
		glob, ok := strings.CutPrefix(s, "skb:")
		if !ok || glob == "" {
			return nil, fmt.Errorf("--graph takes skb:GLOB[,skb:GLOB...] [/PREDICATE/], e.g. --graph 'skb:ip_* /mark == 1/', not %q", sel)
		}
		all = all || glob == "*"
		entries = append(entries, "skb:"+glob)
		returns = append(returns, "skbret:"+glob)
	}
	xdpPred, xdpEntry := "", "print(len)"
	if pred != "" {
		xdpEntry = ""
	}
	if filter != "" {
		f := "pcap(" + Quote(filter) + ")"
		xdpPred = " /" + f + "/"
		if pred != "" {
			f += " && (" + pred + ")"
		}
		pred = f
	}
	if pred != "" {
		pred = " /" + pred + "/"
	}
	text := strings.Join(entries, ", ") + pred + " { track(); print(skb) }\n" +
		strings.Join(returns, ", ") + " /0/ { print(retval, duration) }\n"
	if all {
		if h := hopsFor(); h.on() {
			text = hopConfig + text + h.probes(pred, xdpPred, "print(skb)", "print(retval)", xdpEntry, "print(retval)")
		}
	}
	return &lang.Source{Name: "--graph", Text: text}, nil
}
