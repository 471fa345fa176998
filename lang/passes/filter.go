package passes

import "github.com/skbtrace/skbtrace/lang"

// Filter returns the script with pcap(filter) ANDed in front of the
// predicate of every probe that skb says has an skb (--filter applied to
// a script), and whether there was one. The new nodes take the probe's
// position. s is not changed.
func Filter(s *lang.Script, filter string, skb func(*lang.Probe) bool) (*lang.Script, bool) {
	return eachProbe(s, func(p *lang.Probe) *lang.Probe {
		if !skb(p) {
			return p
		}
		at := p.At
		return andPred(p, &lang.CallExpr{At: at, Name: "pcap", NameSpan: at, Args: []lang.Expr{&lang.StrLit{At: at, Value: filter}}})
	})
}

// andPred returns a copy of p whose predicate is x, ANDed in front of the
// parenthesised predicate p had, if any. The new nodes take the probe's
// position.
func andPred(p *lang.Probe, x lang.Expr) *lang.Probe {
	if p.Pred != nil {
		x = &lang.BinaryExpr{At: p.Pred.Span(), Op: "&&", OpSpan: p.At, X: x, Y: &lang.ParenExpr{At: p.Pred.Span(), X: p.Pred}}
	}
	cp := *p
	cp.Pred = x
	return &cp
}
