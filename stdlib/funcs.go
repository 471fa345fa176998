package stdlib

import (
	"slices"
	"sort"

	"github.com/skbtrace/skbtrace/lang/types"
)

// Call is what a function's type rule sees of a call: its arguments' types
// and constant values, and a way to report errors at an argument.
type Call interface {
	NArgs() int
	Arg(i int) types.Type
	// ConstInt returns the argument's value when it is a constant integer.
	ConstInt(i int) (int64, bool)
	// ConstStr returns the argument's value when it is a constant string.
	ConstStr(i int) (string, bool)
	// IsMapElem reports whether argument i is `@m[...]` with keys; IsMap
	// whether it is a map named alone, `@m`.
	IsMapElem(i int) bool
	IsMap(i int) bool
	// Errorf reports an error at argument i, or at the call for i < 0.
	Errorf(i int, hint, format string, args ...any)
	// MaxStrlen is the script's max_strlen (config or
	// BPFTRACE_MAX_STRLEN), at most MaxStrlen; 0 where it sets none.
	MaxStrlen() int
}

// Func is a builtin function.
type Func struct {
	Name string
	Sig  string
	Doc  string
	// Agg is set for aggregations, which are only valid as `@m[...] = f(...)`.
	Agg types.AggKind
	// Stmt functions are only valid as statements (they have no value).
	Stmt  bool
	Needs Need
	// Internal functions are only called by code the compiler writes (a
	// compiled pcap filter); hints never suggest them.
	Internal bool
	// Infer checks the arguments and returns the call's type.
	Infer func(c Call) types.Type
}

func arity(c Call, sig string, lo, hi int) bool {
	if n := c.NArgs(); n < lo || n > hi {
		c.Errorf(-1, "the signature is "+sig, "wrong number of arguments: got %d", n)
		return false
	}
	return true
}

func intArg(c Call, i int, what string) bool {
	if t := c.Arg(i); !t.IsInt() && t.Kind != types.Invalid {
		c.Errorf(i, "", "%s needs an integer, got %s", what, t)
		return false
	}
	return true
}

func agg(name string, kind types.AggKind, nargs int, sig, doc string) *Func {
	return &Func{Name: name, Sig: sig, Doc: doc, Agg: kind, Infer: func(c Call) types.Type {
		if arity(c, sig, nargs, nargs) && nargs > 0 {
			intArg(c, 0, name)
		}
		return types.Type{Kind: types.Agg, Agg: kind}
	}}
}

var lhist = &Func{Name: "lhist", Sig: "lhist(value, min, max, step)", Doc: "linear histogram", Agg: types.AggLhist,
	Infer: func(c Call) types.Type {
		t := types.Type{Kind: types.Agg, Agg: types.AggLhist}
		if !arity(c, "lhist(value, min, max, step)", 4, 4) || !intArg(c, 0, "lhist") {
			return t
		}
		var v [4]int64
		for i := 1; i < 4; i++ {
			x, ok := c.ConstInt(i)
			if !ok {
				c.Errorf(i, "min, max and step are fixed when the script is compiled", "lhist bound must be a constant integer")
				return t
			}
			v[i] = x
		}
		switch {
		case v[3] <= 0:
			c.Errorf(3, "", "lhist step must be positive")
		case v[2] <= v[1]:
			c.Errorf(2, "", "lhist max must be greater than min")
		case (v[2]-v[1])/v[3] > 1000:
			c.Errorf(3, "use a larger step, or hist() for wide ranges", "lhist would have %d buckets; at most 1000", (v[2]-v[1])/v[3])
		}
		return t
	}}

func mapArg(name string, elem bool) *Func {
	sig := name + "(@map)"
	if elem {
		sig = name + "(@map[key]) or " + name + "(@map, key)"
	}
	return &Func{Name: name, Sig: sig, Stmt: true, Infer: func(c Call) types.Type {
		if !arity(c, sig, 1, 1) {
			return types.None
		}
		if elem && !c.IsMapElem(0) {
			c.Errorf(0, "e.g. delete(@bytes[saddr])", "%s needs a map element @name[key]", name)
		}
		if !elem && !c.IsMap(0) {
			c.Errorf(0, "e.g. "+name+"(@drops)", "%s needs a map", name)
		}
		return types.None
	}}
}

// Funcs are the builtin functions.
var Funcs = []*Func{
	{Name: "printf", Sig: `printf("format", args...)`, Doc: "prints exactly its format", Stmt: true},
	{Name: "cat", Sig: `cat("file" [, args...])`, Doc: "prints a file's contents (up to config max_cat_bytes, 10000) when the event is printed: the runtime reads it; the name is formatted as printf formats, cat(\"/proc/%d/status\", pid)", Stmt: true},
	{Name: "print", Sig: "print(a, b, ...), print(@map) or print(@map, top, div)", Doc: "prints one event line, or a map (its top entries, each value divided)", Stmt: true},
	agg("count", types.AggCount, 0, "count()", "counts events"),
	agg("sum", types.AggSum, 1, "sum(value)", "sums values"),
	agg("avg", types.AggAvg, 1, "avg(value)", "averages values"),
	agg("min", types.AggMin, 1, "min(value)", "smallest value"),
	agg("max", types.AggMax, 1, "max(value)", "largest value"),
	agg("stats", types.AggStats, 1, "stats(value)", "count, average and total"),
	hist,
	lhist,
	tseries,
	elemFunc("delete", "deletes a map element; true where there was one to delete"),
	elemFunc("has_key", "whether a map has an element of the key"),
	mapArg("clear", false),
	mapArg("zero", false),
	{Name: "exit", Sig: "exit([code])", Doc: "ends tracing; skbtrace exits with the code (0 where none is given)", Stmt: true, Infer: func(c Call) types.Type {
		if arity(c, "exit([code])", 0, 1) && c.NArgs() == 1 {
			intArg(c, 0, "exit")
		}
		return types.None
	}},
	{Name: "track", Sig: "track()", Doc: "follows this skb from here on, across clones and copies", Stmt: true, Needs: NeedSkb, Infer: func(c Call) types.Type {
		arity(c, "track()", 0, 0)
		return types.None
	}},
	{Name: "join", Sig: `join(array [, "separator"])`, Doc: "prints the strings of a NULL-ended array of string pointers (a process's argv), up to 16 of 256 bytes, joined by a space or the separator, and a newline", Stmt: true, Infer: func(c Call) types.Type {
		const sig = `join(array [, "separator"])`
		if !arity(c, sig, 1, 2) {
			return types.None
		}
		if t := c.Arg(0); !t.IsScalar() && t.Kind != types.Invalid {
			c.Errorf(0, "e.g. join(args.argv)", "join needs the address of an array of string pointers, got %s", t)
		}
		if c.NArgs() == 2 {
			if _, ok := c.ConstStr(1); !ok && c.Arg(1).Kind != types.Invalid {
				c.Errorf(1, `e.g. join(args.argv, ",")`, "join's separator must be a string literal")
			}
		}
		return types.None
	}},
	{Name: "ksym", Sig: "ksym(address)", Doc: "the kernel symbol at an address", Infer: func(c Call) types.Type {
		if arity(c, "ksym(address)", 1, 1) {
			if t := c.Arg(0); !t.IsScalar() && t.Kind != types.Invalid {
				c.Errorf(0, "", "ksym needs an address, got %s", t)
			}
		}
		return types.Type{Kind: types.Int, Size: 8, Fmt: types.FmtKsym}
	}},
	{Name: "usym", Sig: "usym(address)", Doc: "the user-space function at an address of the current process, found when it is printed (from the process's mappings and its binary's symbols; the address in hex where none is)", Infer: func(c Call) types.Type {
		if arity(c, "usym(address)", 1, 1) {
			if t := c.Arg(0); !t.IsScalar() && t.Kind != types.Invalid {
				c.Errorf(0, "", "usym needs an address, got %s", t)
			}
		}
		return types.Type{Kind: types.String, Size: UsymSize, Fmt: types.FmtUsym}
	}},
	{Name: "kaddr", Sig: `kaddr("symbol")`, Doc: "the address of a kernel symbol, resolved from /proc/kallsyms when the script is compiled", Infer: func(c Call) types.Type {
		if arity(c, `kaddr("symbol")`, 1, 1) {
			if _, ok := c.ConstStr(0); !ok && c.Arg(0).Kind != types.Invalid {
				c.Errorf(0, `e.g. kaddr("tcp_v4_rcv")`, "kaddr needs the symbol's name as a string literal")
			}
		}
		return types.U64
	}},
	{Name: "buf", Sig: "buf(pointer, length) or buf(array)", Doc: "length bytes (at most 64; a constant, or a value read when the probe runs) at a pointer, or an array member's, printed as bpftrace prints a buffer: printable bytes as they are, others as \\x01", Infer: func(c Call) types.Type {
		const sig = "buf(pointer, length) or buf(array)"
		t := types.Type{Kind: types.String, Size: 1 + MaxBuf, Fmt: types.FmtBuf}
		if !arity(c, sig, 1, 2) {
			return t
		}
		a := c.Arg(0)
		array := a.Kind == types.Array || (a.Kind == types.String && a.Fmt != types.FmtBuf)
		switch {
		case a.Kind == types.Invalid:
			return t
		case c.NArgs() == 1 && array:
			t.Size = 1 + min(a.Size, MaxBuf)
		case c.NArgs() == 1:
			c.Errorf(-1, "the signature is "+sig, "buf of %s needs a length", a)
			return t
		case !a.IsScalar() && !array:
			c.Errorf(0, "e.g. buf(skb->data, 16)", "buf needs a pointer or an array, got %s", a)
			return t
		}
		if c.NArgs() == 2 {
			v, ok := c.ConstInt(1)
			if !ok {
				// Known when the probe runs: up to MaxBuf bytes, or the
				// array's.
				if intArg(c, 1, "buf's length") && array {
					t.Size = 1 + min(a.Size, MaxBuf)
				}
				return t
			}
			if v < 1 || v > MaxBuf {
				c.Errorf(1, "buf reads at most that many bytes; give a smaller length", "buf's length must be from 1 to %d", MaxBuf)
				return t
			}
			if _, lit := c.ConstStr(0); array && !lit {
				// An array member (or a string value) no further than
				// its end; a string literal (buf("ok_key", 8)) as long
				// as asked, its NULs too, as bpftrace reads it.
				v = min(v, int64(a.Size))
			}
			t.Size = 1 + int(v)
		}
		return t
	}},
	{Name: "strftime", Sig: `strftime("format", nsecs)`, Doc: "a time in nanoseconds since boot (nsecs), printed by a strftime format, %f microseconds", Infer: func(c Call) types.Type {
		t := types.Type{Kind: types.Int, Size: 8, Fmt: types.FmtStrftime}
		if arity(c, `strftime("format", nsecs)`, 2, 2) {
			if f, ok := c.ConstStr(0); ok {
				t.Layout = f
			} else if c.Arg(0).Kind != types.Invalid {
				c.Errorf(0, `e.g. strftime("%H:%M:%S", nsecs)`, "strftime's format must be a string literal")
			}
			intArg(c, 1, "strftime's time")
		}
		return t
	}},
	{Name: "str", Sig: "str(pointer [, length])", Doc: "reads a NUL-terminated kernel string: 63 bytes, or max_strlen's (then cut ones print with bpftrace's .. trailer), or length-1", Infer: func(c Call) types.Type {
		n := int64(64)
		cut := false
		if m := c.MaxStrlen(); m > 0 {
			n, cut = int64(m)+1, true
		}
		if arity(c, "str(pointer [, length])", 1, 2) {
			if t := c.Arg(0); (!t.IsScalar() && t.Kind != types.String && t.Kind != types.Invalid) || t.Fmt == types.FmtBuf {
				c.Errorf(0, "", "str needs a pointer, got %s", t)
			}
			if c.NArgs() == 2 {
				v, ok := c.ConstInt(1)
				if !ok || v < 1 || v > MaxStrlen+1 {
					c.Errorf(1, "", "str length must be a constant from 1 to %d", MaxStrlen+1)
				} else {
					n, cut = v, false
				}
			}
		}
		t := types.Str(int(n))
		t.Cut = cut
		return t
	}},
	{Name: "ntop", Sig: "ntop([family,] address)", Doc: "an address from a 4-byte IPv4 integer or a 16-byte IPv6 array, as in a socket", Infer: func(c Call) types.Type {
		if !arity(c, "ntop([family,] address)", 1, 2) {
			return types.IP
		}
		i := c.NArgs() - 1
		if i == 1 {
			intArg(c, 0, "ntop's family")
		}
		switch t := c.Arg(i); {
		case t.Kind == types.Invalid, t.Kind == types.Addr:
		case t.IsInt():
			// An IPv4 address as it sits in memory; ntop(0) is bpftrace's
			// way to give a variable the address type.
		case (t.Kind == types.Array || t.Kind == types.Struct || t.Kind == types.String) && (t.Size == 16 || t.Size == 4):
		default:
			c.Errorf(i, "pass sk->__sk_common.skc_daddr (IPv4) or skc_v6_daddr (IPv6)", "ntop needs an integer or a 4- or 16-byte array, got %s", t)
		}
		return types.IP
	}},
	{Name: "tcp_state", Sig: "tcp_state(state)", Doc: "prints a TCP state number by name: ESTABLISHED...", Infer: func(c Call) types.Type {
		if arity(c, "tcp_state(state)", 1, 1) {
			intArg(c, 0, "tcp_state")
		}
		return types.Type{Kind: types.Int, Size: 1, Fmt: types.FmtTCPState}
	}},
	{Name: "endpoint", Sig: "endpoint(address, port)", Doc: "an address and a port, printed as 10.0.0.1:80 or [fd00::1]:80", Infer: func(c Call) types.Type {
		if arity(c, "endpoint(address, port)", 2, 2) {
			if t := c.Arg(0); t.Kind != types.Addr && t.Kind != types.Invalid {
				c.Errorf(0, "e.g. endpoint(saddr, sport)", "endpoint needs an address, got %s", t)
			}
			intArg(c, 1, "endpoint's port")
		}
		return types.Type{Kind: types.Endpoint, Size: 32}
	}},
	{Name: "bswap", Sig: "bswap(value)", Doc: "reverses the bytes of an integer of its own width (bpftrace's bswap)", Infer: func(c Call) types.Type {
		if arity(c, "bswap(value)", 1, 1) && intArg(c, 0, "bswap") {
			t := c.Arg(0)
			t.Fmt, t.BTF = types.FmtDec, nil
			return t
		}
		return types.U64
	}},
	{Name: "time", Sig: `time(["format"])`, Doc: "prints the current time with a strftime format (default \"%H:%M:%S\\n\")", Stmt: true},
	{Name: "kstack", Sig: "kstack([mode,] [limit])", Doc: "the kernel stack, as the kstack field: its first limit frames, printed as mode prints them (bpftrace: name+offset, perf: address and name+offset, raw: address)", Infer: func(c Call) types.Type {
		const sig = "kstack([mode,] [limit])"
		t := types.Type{Kind: types.Stack}
		if !arity(c, sig, 0, 2) {
			return t
		}
		i := 0
		if c.NArgs() > 0 {
			if mode, ok := c.ConstStr(0); ok {
				if mode != "bpftrace" && mode != "perf" && mode != "raw" {
					c.Errorf(0, "kstack(perf, 3)", "kstack's mode is bpftrace, perf or raw")
				}
				t.Layout = mode
				i = 1
			}
		}
		switch {
		case c.NArgs()-i > 1:
			c.Errorf(0, "kstack(perf, 3)", "kstack's mode comes first: bpftrace, perf or raw")
		case c.NArgs() > i:
			n, ok := c.ConstInt(i)
			if !ok || n < 1 || n > StackDepth {
				c.Errorf(i, "kstack(3)", "kstack's limit must be a constant from 1 to %d", StackDepth)
			} else {
				t.Size = int(n)
			}
		}
		return t
	}},
	{Name: "why", Sig: "why(reason)", Doc: "prints a drop reason as a sentence saying what it means", Infer: func(c Call) types.Type {
		if arity(c, "why(reason)", 1, 1) {
			t := c.Arg(0)
			if t.Fmt != types.FmtEnum && t.Kind != types.Invalid {
				c.Errorf(0, "e.g. why(reason) on tracepoint:skb:kfree_skb", "why needs a drop reason, got %s", t)
				return types.Bad
			}
			t.Fmt = types.FmtDropWhy
			return t
		}
		return types.Bad
	}},
	{Name: "rule", Sig: "rule(reason, netns, dev, l4proto, saddr, sport, daddr, dport)", Doc: "prints the rule or action that dropped a packet, named in user space (runtime/rules): the nftables rule (with --nftrace), the iptables-legacy rule, the tc action; its text, comment and the object it names, or why it cannot tell; nothing for the reasons no rule gives", Infer: func(c Call) types.Type {
		const sig = "rule(reason, netns, dev, l4proto, saddr, sport, daddr, dport)"
		if !arity(c, sig, len(RuleArgs), len(RuleArgs)) {
			return types.Bad
		}
		elems := make([]types.Type, len(RuleArgs))
		for i := range RuleArgs {
			elems[i] = c.Arg(i)
			if elems[i].Kind == types.Invalid {
				return types.Bad
			}
		}
		for _, i := range []int{4, 6} {
			if elems[i].Kind != types.Addr {
				c.Errorf(i, "e.g. "+sig, "rule's %s is an address; got %s", RuleArgs[i], elems[i])
				return types.Bad
			}
		}
		t := types.NewTuple(elems, RuleArgs)
		t.Fmt = types.FmtRule
		return t
	}},
	{Name: "has", Sig: "has(args.NAME)", Doc: "whether this kernel gives the probe an argument NAME: the condition of an if, decided at compile time", Infer: func(c Call) types.Type {
		// check decides every if and predicate has() is the condition
		// of, without checking the call: a call checked here is
		// somewhere else.
		c.Errorf(-1, "if (has(args.reason)) { ... } else { ... }: the branch this kernel does not take is not compiled",
			"has() is only the condition of an if (or its negation)")
		return types.U64
	}},
	swap("ntohs", types.U16),
	swap("ntohl", types.U32),
	{Name: "macaddr", Sig: "macaddr(address)", Doc: "a MAC address: the 6 bytes an array member holds (eth->h_source, skb->dev->dev_addr) or a pointer points at, printed as 52:54:00:12:34:56", Infer: func(c Call) types.Type {
		if arity(c, "macaddr(address)", 1, 1) {
			if t := c.Arg(0); !t.IsScalar() && t.Kind != types.String && t.Kind != types.Invalid {
				c.Errorf(0, "e.g. macaddr(skb->dev->dev_addr)", "macaddr needs a pointer or a byte array, got %s", t)
			}
		}
		return types.Type{Kind: types.Int, Size: 8, Fmt: types.FmtMAC}
	}},
	{Name: "strncmp", Sig: "strncmp(a, b, n)", Doc: "0 where the strings a and b agree in their first n bytes (up to a NUL), else 1 (bpftrace's strncmp)", Infer: func(c Call) types.Type {
		if arity(c, "strncmp(a, b, n)", 3, 3) {
			for i := 0; i < 2; i++ {
				if t := c.Arg(i); (t.Kind != types.String || t.Fmt == types.FmtBuf) && t.Kind != types.Invalid {
					c.Errorf(i, `e.g. strncmp(comm, "ssh", 3) == 0`, "strncmp compares strings, got %s", t)
				}
			}
			if v, ok := c.ConstInt(2); !ok || v < 1 || v > 256 {
				c.Errorf(2, "", "strncmp's length must be a constant from 1 to 256")
			}
		}
		return types.U64
	}},
	{Name: "hex", Sig: "hex(value)", Doc: "prints an integer in hexadecimal", Infer: func(c Call) types.Type {
		if arity(c, "hex(value)", 1, 1) && intArg(c, 0, "hex") {
			t := c.Arg(0)
			t.Fmt = types.FmtHex
			return t
		}
		return types.U64
	}},
}

// MaxBuf is the most bytes buf() reads.
const MaxBuf = 64

// swap is ntohs or ntohl: a network-order integer read from a kernel struct
// (skc_dport, a __be16) in host order.
func swap(name string, t types.Type) *Func {
	sig := name + "(value)"
	return &Func{Name: name, Sig: sig, Doc: "converts a network-order integer to host order", Infer: func(c Call) types.Type {
		if arity(c, sig, 1, 1) {
			intArg(c, 0, name)
		}
		return t
	}}
}

// UsymSize is the size of a usym() value: the address, then the process's
// id, 8 bytes each.
const UsymSize = 16

var funcIndex = byName(slices.Concat(Funcs, funcs026, funcsCompileTime, funcsString, funcsRewritten, funcsNames, pcapFuncs, scopeFuncs), func(f *Func) string { return f.Name })

// LookupFunc finds a builtin function.
func LookupFunc(name string) *Func { return funcIndex[name] }

// FuncNames lists the functions' names, sorted, for hints.
func FuncNames() []string {
	n := make([]string, 0, len(Funcs)+1)
	for _, f := range slices.Concat(Funcs, funcs026, funcsCompileTime, funcsString, funcsRewritten, funcsNames, pcapFuncs) {
		if !f.Internal {
			n = append(n, f.Name)
		}
	}
	sort.Strings(n)
	return n
}

// RuleArgs name rule()'s arguments, in order: its value is a record of
// them, which user space reads by these names.
var RuleArgs = []string{"reason", "netns", "dev", "l4proto", "saddr", "sport", "daddr", "dport"}

// MaxStrlen is the most bytes of a string str() reads where max_strlen
// asks for more: PATH_MAX, the longest name the kernel takes. A string
// too long for the 512-byte BPF stack lives in the per-CPU scratch area
// (codegen/scratch.go), which one probe's strings and records share.
const MaxStrlen = 4096

// StackDepth is the most frames a kernel stack keeps (codegen's
// StackDepth, the kernel's default perf_event_max_stack).
const StackDepth = 127

// HistMaxBits is the largest k of hist(n, k), as bpftrace's: 2^5 buckets
// a power of two.
const HistMaxBits = 5

// hist is hist(value[, k]): a power-of-two histogram, each power's range
// split in 2^k buckets.
var hist = &Func{Name: "hist", Sig: "hist(value [, k])", Doc: "power-of-two histogram; with k (0 to 5), each power of two's range split in 2^k buckets", Agg: types.AggHist,
	Infer: func(c Call) types.Type {
		t := types.Type{Kind: types.Agg, Agg: types.AggHist}
		if !arity(c, "hist(value [, k])", 1, 2) || !intArg(c, 0, "hist") {
			return t
		}
		if c.NArgs() == 2 {
			if k, ok := c.ConstInt(1); !ok || k < 0 || k > HistMaxBits {
				c.Errorf(1, "e.g. hist(len, 2)", "hist's k must be a constant from 0 to %d", HistMaxBits)
			}
		}
		return t
	}}
