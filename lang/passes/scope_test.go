package passes_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/passes"
	"github.com/skbtrace/skbtrace/stdlib"
)

// TestScope checks the tree Scope returns: in an skb probe, the scope test
// of its device's namespace or else its socket's, ANDed in front of the
// parenthesised predicate; in a tracepoint without an skb, the current
// task's namespace; BEGIN and interval probes as they were; and the tree
// it was given unchanged.
func TestScope(t *testing.T) {
	s := parse(t, `skb:ip_rcv { print(1) }
BEGIN { print(2) }
tracepoint:sock:inet_sock_set_state /$x/ { print(3) }
interval:s:1 { print(4) }
skb:tcp_* /$x || $y/ { print(5) }`)
	got, ok := passes.Scope(s, skbProbes, noSock)
	if !ok {
		t.Fatal("Scope changed no probe")
	}
	unchanged(t, s)
	const skbNetns = "scope.netns(netns, (skb->sk->__sk_common.skc_family | 8) == 10 ? skb->sk->__sk_common.skc_net.net->ns.inum : 0)"
	const taskNetns = "scope.netns(curtask->nsproxy->net_ns->ns.inum)"
	for i, want := range []string{skbNetns, "", taskNetns + " && ($x)", "", skbNetns + " && ($x || $y)"} {
		p := got.Probes[i]
		if want == "" {
			if p != s.Probes[i] {
				t.Errorf("probe %d, not on events, was copied", i)
			}
			continue
		}
		if g := exprText(s, p.Pred); g != want {
			t.Errorf("probe %d: predicate %s, want %s", i, g, want)
		}
	}
	if _, ok := passes.Scope(parse(t, `BEGIN { print(1) } END { print(2) }`), skbProbes, noSock); ok {
		t.Error("Scope reported a change in a script of BEGIN and END alone")
	}

	// A probe with a socket argument tests the socket's namespace.
	s = parse(t, `tracepoint:tcp:tcp_retransmit_skb { print(1) }`)
	got, _ = passes.Scope(s, skbProbes, func(*lang.Probe) (string, bool) { return "sk", false })
	if g, want := exprText(s, got.Probes[0].Pred), "scope.netns(args.sk->__sk_common.skc_net.net->ns.inum)"; g != want {
		t.Errorf("with a socket: predicate %s, want %s", g, want)
	}
	got, _ = passes.Scope(s, skbProbes, func(*lang.Probe) (string, bool) { return "skaddr", true })
	if g, want := exprText(s, got.Probes[0].Pred), "scope.netns(((struct sock *)args.skaddr)->__sk_common.skc_net.net->ns.inum)"; g != want {
		t.Errorf("with an untyped socket: predicate %s, want %s", g, want)
	}
}

// noSock says no probe has a socket argument.
func noSock(*lang.Probe) (string, bool) { return "", false }

// exprText writes the expressions Scope makes, and the probe's own
// predicate as the source has it.
func exprText(s *lang.Script, e lang.Expr) string {
	switch e := e.(type) {
	case *lang.CallExpr:
		var args []string
		for _, a := range e.Args {
			args = append(args, exprText(s, a))
		}
		if e.Name != stdlib.ScopeFunc {
			return "?call " + e.Name
		}
		return e.Name + "(" + strings.Join(args, ", ") + ")"
	case *lang.CondExpr:
		return exprText(s, e.Cond) + " ? " + exprText(s, e.Then) + " : " + exprText(s, e.Else)
	case *lang.Ident:
		return e.Name
	case *lang.IntLit:
		return strconv.FormatUint(e.Value, 10)
	case *lang.FieldExpr:
		sep := "."
		if e.Arrow {
			sep = "->"
		}
		return exprText(s, e.X) + sep + e.Name
	case *lang.BinaryExpr:
		return exprText(s, e.X) + " " + e.Op + " " + exprText(s, e.Y)
	case *lang.ParenExpr:
		if c, ok := e.X.(*lang.CastExpr); ok {
			return "((" + c.Type + " " + strings.Repeat("*", c.Ptr) + ")" + exprText(s, c.X) + ")"
		}
		return "(" + exprText(s, e.X) + ")"
	case *lang.VarExpr:
		return "$" + strings.TrimPrefix(e.Name, "$")
	}
	return "?"
}
