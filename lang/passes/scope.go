package passes

import (
	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/stdlib"
)

// Scope returns the script with the pod filters' test (--pod, --namespace,
// --container, --netns) ANDed in front of the predicate of every probe that
// runs on an event: scope.netns(INODE), true where the network namespace
// is one the filters let through (codegen.ScopeMap, which user space keeps
// current). INODE is, in a probe with an skb, the network namespace of its
// device, or of its socket where it has no device yet (the first
// functions a packet sent meets) and the socket is an IPv4 or IPv6 one
// (else 0, which no filter lets through); in a probe with a socket
// argument (which sock names: a struct sock *, or, with cast, a
// tracepoint's untyped skaddr; the tcp tools' tracepoints), the socket's;
// in any other probe of a function, tracepoint or uprobe, the current
// task's. BEGIN, END, interval and profile probes, and BPF
// programs' probes without an skb (XDP frames), are left alone.
// It reports whether a probe changed; s is not changed.
func Scope(s *lang.Script, skb func(*lang.Probe) bool, sock func(*lang.Probe) (name string, cast bool)) (*lang.Script, bool) {
	return eachProbe(s, func(p *lang.Probe) *lang.Probe {
		var inode, otherwise lang.Expr
		at := p.At
		sockArg, cast := sock(p)
		switch {
		case skb(p):
			// Before it has a device, a packet is its socket's: an IPv4
			// or IPv6 one (family 2 or 10, the two whose value | 8 is 10;
			// a netlink message is no pod's packet). scope.netns reads the
			// socket only where netns is 0.
			sk := func(steps ...string) lang.Expr {
				return chain(at, &lang.Ident{At: at, Name: "skb"}, append([]string{"->sk", "->__sk_common"}, steps...)...)
			}
			family := &lang.BinaryExpr{At: at, Op: "|", OpSpan: at, X: sk(".skc_family"), Y: &lang.IntLit{At: at, Value: 8}}
			inet := &lang.BinaryExpr{At: at, Op: "==", OpSpan: at, X: &lang.ParenExpr{At: at, X: family}, Y: &lang.IntLit{At: at, Value: 10}}
			inode = &lang.Ident{At: at, Name: "netns"}
			otherwise = &lang.CondExpr{At: at, Cond: inet, Then: sk(".skc_net", ".net", "->ns", ".inum"), Else: &lang.IntLit{At: at, Value: 0}}
		case sockArg != "":
			var arg lang.Expr = &lang.FieldExpr{At: at, X: &lang.Ident{At: at, Name: "args"}, Name: sockArg, NameSpan: at}
			if cast {
				arg = &lang.ParenExpr{At: at, X: &lang.CastExpr{At: at, Type: "struct sock", Ptr: 1, X: arg}}
			}
			inode = chain(at, arg, "->__sk_common", ".skc_net", ".net", "->ns", ".inum")
		case onEvents(p):
			inode = chain(at, &lang.Ident{At: at, Name: "curtask"}, "->nsproxy", "->net_ns", "->ns", ".inum")
		default:
			return p
		}
		args := []lang.Expr{inode}
		if otherwise != nil {
			args = append(args, otherwise)
		}
		return andPred(p, &lang.CallExpr{At: at, Name: stdlib.ScopeFunc, NameSpan: at, Args: args})
	})
}

// onEvents reports whether a probe runs on the kernel's or a process's
// events (a function, a tracepoint, a uprobe), not on BEGIN, END, a timer
// or a CPU profile, nor in a BPF program without an skb (an XDP frame's,
// in softirq: no task's namespace says whose it is).
func onEvents(p *lang.Probe) bool {
	for _, s := range p.Specs {
		switch s.Kind {
		case lang.ProbeBegin, lang.ProbeEnd, lang.ProbeInterval, lang.ProbeProfile, lang.ProbeBpf, lang.ProbeBpfRet:
			return false
		}
	}
	return true
}

// chain builds x->a.b...: each step "->name" or ".name".
func chain(at lang.Span, x lang.Expr, steps ...string) lang.Expr {
	for _, s := range steps {
		arrow := s[0] == '-'
		name := s[1:]
		if arrow {
			name = s[2:]
		}
		x = &lang.FieldExpr{At: at, X: x, Name: name, NameSpan: at, Arrow: arrow}
	}
	return x
}
