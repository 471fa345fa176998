package passes

import "github.com/skbtrace/skbtrace/lang"

// Capture returns the script with every probe that skb says has an skb,
// and that does not call capture() itself, starting with capture() (-w
// applied to a script: every event of an skb probe is a frame), and
// whether there was one. s is not changed.
func Capture(s *lang.Script, skb func(*lang.Probe) bool) (*lang.Script, bool) {
	return eachProbe(s, func(p *lang.Probe) *lang.Probe {
		if !skb(p) || CallsCapture(p) {
			return p
		}
		at := p.Body.At
		call := &lang.ExprStmt{At: at, X: &lang.CallExpr{At: at, Name: "capture", NameSpan: at}}
		body := *p.Body
		body.Stmts = append([]lang.Stmt{call}, p.Body.Stmts...)
		cp := *p
		cp.Body = &body
		return &cp
	})
}

// CallsCapture reports whether a node calls capture() itself.
func CallsCapture(n lang.Node) bool {
	found := false
	lang.Inspect(n, func(n lang.Node) bool {
		if c, ok := n.(*lang.CallExpr); ok && c.Name == "capture" {
			found = true
		}
		return !found
	})
	return found
}
