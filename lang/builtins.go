package lang

import (
	"encoding/binary"
	"net/netip"
	"strings"
)

// bpftrace 0.26 calls its builtin values as functions too: `pid` and
// `pid()` are one (stdlib.md: "all functions or macros that don't have
// arguments or have default arguments can be invoked with or without the
// call syntax"), and some take a mode: pid(curr_ns), nsecs(boot). The
// parser rewrites these calls into the names the checker knows (after
// macros are expanded, so a macro of the same name wins):
//
//   - __builtin_NAME is NAME (bpftrace's name of the builtin itself);
//   - NAME() of a value below is NAME;
//   - pid(curr_ns|init), tid(curr_ns|init) are pid, tid (skbtrace runs in
//     the initial PID namespace: both modes agree there);
//   - nsecs(monotonic) is nsecs; nsecs(boot), nsecs(tai) and nsecs(sw_tai)
//     read those clocks (stdlib.NsecsBoot, NsecsTAI);
//   - pcomm, pcomm() and pcomm(task) are task->real_parent->comm (bpftrace
//     0.26's; 0.25 read group_leader), ppid the parent's tgid, leader_tid
//     and leader_comm the thread group leader's pid and comm, the current
//     task's where none is given;
//   - len(kstack) is __kstack_len, the stack's depth (stdlib.KstackLen);
//   - is_err(p) is the kernel's IS_ERR_VALUE: (uint64)p >= (uint64)-4095;
//   - assert(cond, msg) is if (!(cond)) { errorf("%s", msg); exit() }: the
//     message with the call's place, and tracing ends with status 1;
//   - pton("10.0.0.1") is the address literal 10.0.0.1 (compared with
//     saddr and the like as one), and (uint32)pton("127.0.0.1") the
//     integer its four bytes are in memory (0x0100007f), as bpftrace's
//     array cast of pton's char[4] is.

// valueBuiltins are bpftrace's builtin values that may be called with ().
var valueBuiltins = map[string]bool{
	"pid": true, "tid": true, "comm": true, "cpu": true, "curtask": true, "rand": true, "uid": true, "gid": true,
	"nsecs": true, "elapsed": true, "func": true, "probe": true, "retval": true, "cgroup": true, "numaid": true,
	"jiffies": true, "ncpus": true, "usermode": true, "cpid": true, "has_cpid": true,
	"probetype": true,
}

// callBuiltins are bpftrace's functions of no argument that may be named
// bare: default_str_length is default_str_length().
var callBuiltins026 = map[string]bool{"default_str_length": true}

// nsecsClocks are nsecs()'s modes and the names they read.
var nsecsClocks = map[string]string{
	"monotonic": "nsecs", "boot": "__nsecs_boot", "tai": "__nsecs_tai", "sw_tai": "__nsecs_tai",
}

// callBuiltins rewrites the script's calls of builtin values.
func callBuiltins(s *Script, d *Diagnostics) {
	for _, p := range s.Probes {
		rewriteExprsOf(p, func(e Expr) Expr { return builtinCall(e, d) })
	}
}

func builtinCall(e Expr, d *Diagnostics) Expr {
	// __builtin_NAME is the builtin NAME, whatever a macro calls NAME.
	switch n := e.(type) {
	case *Ident:
		if name, ok := strings.CutPrefix(n.Name, "__builtin_"); ok && name != "" {
			n.Name = name
		}
	case *CallExpr:
		if name, ok := strings.CutPrefix(n.Name, "__builtin_"); ok && name != "" {
			n.Name = name
		}
	}
	if cast, ok := e.(*CastExpr); ok {
		return ptonCast(cast)
	}
	if id, ok := e.(*Ident); ok && callBuiltins026[id.Name] {
		return &CallExpr{At: id.At, Name: id.Name, NameSpan: id.At}
	}
	if id, ok := e.(*Ident); ok && id.Name == "username" {
		return usernameOf(id.At)
	}
	if id, ok := e.(*Ident); ok && taskFields[id.Name] != nil {
		return taskField(id.At, &Ident{At: id.At, Name: "curtask"}, taskFields[id.Name])
	}
	c, ok := e.(*CallExpr)
	if !ok {
		return e
	}
	mode := ""
	if len(c.Args) == 1 {
		if id, ok := Unparen(c.Args[0]).(*Ident); ok {
			mode = id.Name
		}
	}
	switch {
	case taskFields[c.Name] != nil && len(c.Args) <= 1:
		task := Expr(&Ident{At: c.At, Name: "curtask"})
		if len(c.Args) == 1 {
			task = c.Args[0]
		}
		return taskField(c.At, task, taskFields[c.Name])
	case c.Name == "username" && len(c.Args) == 0:
		return usernameOf(c.At)
	case c.Name == "assert" && len(c.Args) == 2:
		return assertCall(c)
	case c.Name == "is_err" && len(c.Args) == 1:
		return isErr(c)
	case c.Name == "kstack" && len(c.Args) > 0 && (mode == "bpftrace" || mode == "perf" || mode == "raw" || len(c.Args) == 2):
		// kstack(perf, 3): the mode is a name, read as its text.
		if id, ok := Unparen(c.Args[0]).(*Ident); ok {
			c.Args[0] = &StrLit{At: id.At, Value: id.Name}
		}
		return c
	case c.Name == "len" && len(c.Args) == 1 && isWholeMap(c.Args[0]):
		return mapLen(c, c.Args[0].(*MapExpr))
	case c.Name == "len" && len(c.Args) == 1 && isKstack(c.Args[0]):
		return &Ident{At: c.At, Name: "__kstack_len"}
	case c.Name == "socket_cookie" && len(c.Args) == 1:
		return socketCookie(c)
	case c.Name == "find" && len(c.Args) == 3:
		return findCall(c, d)
	case c.Name == "pton" && len(c.Args) == 1:
		return pton(c, d)
	case c.Name == "nsecs" && len(c.Args) == 1:
		name, ok := nsecsClocks[mode]
		if !ok {
			d.Add(c.Args[0].Span(), "the clocks are monotonic, boot, tai and sw_tai", "unknown clock for nsecs()")
			return e
		}
		return &Ident{At: c.At, Name: name}
	case (c.Name == "pid" || c.Name == "tid") && len(c.Args) == 1:
		if mode != "curr_ns" && mode != "init" {
			d.Add(c.Args[0].Span(), "write "+c.Name+"(curr_ns) or "+c.Name+"(init)", "unknown PID namespace for %s()", c.Name)
			return e
		}
		return &Ident{At: c.At, Name: c.Name}
	case valueBuiltins[c.Name] && len(c.Args) == 0:
		return &Ident{At: c.At, Name: c.Name}
	}
	return e
}

// isKstack reports whether e is kstack or kstack(): len(kstack) is the
// stack's depth (bpftrace 0.26).
func isKstack(e Expr) bool {
	switch e := Unparen(e).(type) {
	case *Ident:
		return e.Name == "kstack"
	case *CallExpr:
		return e.Name == "kstack" && len(e.Args) == 0
	}
	return false
}

// taskFields are bpftrace's stdlib macros that read a task's relative:
// the member chain each one follows from the task.
var taskFields = map[string][]string{
	"pcomm":       {"real_parent", "comm"},
	"ppid":        {"real_parent", "tgid"},
	"leader_tid":  {"group_leader", "pid"},
	"leader_comm": {"group_leader", "comm"},
}

// taskField is task->a->b, the chain of a taskFields macro.
func taskField(at Span, task Expr, chain []string) Expr {
	x := task
	for _, name := range chain {
		x = &FieldExpr{At: at, X: x, Name: name, NameSpan: at, Arrow: true}
	}
	return x
}

// pton is bpftrace's pton("ADDRESS") of a string literal: the address.
func pton(c *CallExpr, d *Diagnostics) Expr {
	lit, ok := Unparen(c.Args[0]).(*StrLit)
	if !ok {
		d.Add(c.Args[0].Span(), `e.g. pton("10.0.0.1") or pton("::1")`, "pton's address must be a string literal")
		return c
	}
	addr, err := netip.ParseAddr(lit.Value)
	if err != nil || addr.Zone() != "" {
		d.Add(lit.At, `an IPv4 address (10.0.0.1) or an IPv6 one (::1)`, "pton: %q is not an address", lit.Value)
		return c
	}
	return &IPLit{At: c.At, Addr: addr}
}

// ptonCast folds (uint32)pton("a.b.c.d"): the four bytes as memory holds
// them, read as a little-endian integer.
func ptonCast(c *CastExpr) Expr {
	ip, ok := c.X.(*IPLit)
	if !ok || c.Type != "uint32" || c.Ptr != 0 || c.Array || !ip.Addr.Is4() {
		return c
	}
	b := ip.Addr.As4()
	return &IntLit{At: c.At, Value: uint64(binary.LittleEndian.Uint32(b[:]))}
}

// isErr is bpftrace 0.26's is_err(p): whether p is an ERR_PTR, an
// address in the last 4095 (MAX_ERRNO) of the address space.
func isErr(c *CallExpr) Expr {
	at := c.At
	x := &CastExpr{At: c.Args[0].Span(), Type: "uint64", X: &ParenExpr{At: c.Args[0].Span(), X: c.Args[0]}}
	return &ParenExpr{At: at, X: &BinaryExpr{At: at, Op: ">=", OpSpan: at, X: x, Y: &IntLit{At: at, Value: 1<<64 - 4095}}}
}

// assertCall is assert(cond, msg): a block that ends tracing with the
// message where cond does not hold.
func assertCall(c *CallExpr) Expr {
	at := c.At
	format := &StrLit{At: at, Value: "%s"}
	errorf := &ExprStmt{At: at, X: &CallExpr{At: at, Name: "errorf", NameSpan: c.NameSpan, Args: []Expr{format, c.Args[1]}, Assert: true}}
	// bpftrace's assert exits with status 1.
	exit := &ExprStmt{At: at, X: &CallExpr{At: at, Name: "exit", NameSpan: c.NameSpan, Args: []Expr{&IntLit{At: at, Value: 1}}}}
	not := &UnaryExpr{At: c.Args[0].Span(), Op: "!", X: &ParenExpr{At: c.Args[0].Span(), X: c.Args[0]}}
	check := &IfStmt{At: at, Cond: not, Then: &Block{At: at, Stmts: []Stmt{errorf, exit}}}
	return &BlockExpr{At: at, Stmts: []Stmt{check}}
}
