package lang

// bpftrace 0.26's builtins the parser writes as other code.

// socketCookie is bpftrace's socket_cookie(sk): the socket's cookie,
// read from sk->__sk_common.skc_cookie as a uint64. Where the kernel has
// not yet given the socket one it is 0: bpftrace's helper,
// bpf_get_socket_cookie, would make one, and takes only the kernel's
// typed socket pointers that fentry and tp_btf probes have.
func socketCookie(c *CallExpr) Expr {
	at := c.At
	sk := &CastExpr{At: at, Type: "struct sock", Ptr: 1, X: c.Args[0]}
	common := &FieldExpr{At: at, X: sk, Name: "__sk_common", NameSpan: at, Arrow: true}
	cookie := &FieldExpr{At: at, X: common, Name: "skc_cookie", NameSpan: at}
	counter := &FieldExpr{At: at, X: cookie, Name: "counter", NameSpan: at}
	return &CastExpr{At: at, Type: "uint64", X: counter}
}

// usernameOf is bpftrace's username: the current user's name, written
// username(uid), which reads it from a table of /etc/passwd's users.
func usernameOf(at Span) Expr {
	return &CallExpr{At: at, Name: "username", NameSpan: at, Args: []Expr{&Ident{At: at, Name: "uid"}}}
}
