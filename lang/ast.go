package lang

import "net/netip"

// Node is any AST node; every node knows the source span it came from.
type Node interface {
	Span() Span
}

// Expr is an expression node.
type Expr interface {
	Node
	exprNode()
}

// Stmt is a statement node.
type Stmt interface {
	Node
	stmtNode()
}

// Script is a whole program: its probes in source order.
type Script struct {
	At     Span
	Src    *Source
	Probes []*Probe
	// Config is bpftrace's config block, nil when there is none.
	Config *Config
	// MapDecls are the preamble's map declarations (let @m = hash(N));
	// Types its C type definitions, in source order.
	MapDecls []*MapDecl
	Types    []*CTypeDef
}

// ProbeKind says what a probe spec attaches to.
type ProbeKind string

// The probe kinds of SPEC.md.
const (
	ProbeSkb        ProbeKind = "skb"
	ProbeSkbRet     ProbeKind = "skbret" // the return side of skb:, as kretprobe is of kprobe
	ProbeKprobe     ProbeKind = "kprobe"
	ProbeKretprobe  ProbeKind = "kretprobe"
	ProbeFentry     ProbeKind = "fentry"
	ProbeFexit      ProbeKind = "fexit"
	ProbeTracepoint ProbeKind = "tracepoint"
	ProbeBegin      ProbeKind = "BEGIN"
	ProbeEnd        ProbeKind = "END"
	ProbeInterval   ProbeKind = "interval"
	// ProbeSelf is bpftrace 0.26's self:signal:SIGUSR1: run by the
	// runtime when skbtrace gets the signal (Name).
	ProbeSelf ProbeKind = "self"
	// ProbeProfile fires on every CPU at a rate (profile:hz:99), from a
	// software perf event (the CPU clock) per CPU.
	ProbeProfile ProbeKind = "profile"
	// ProbeUprobe and ProbeUretprobe are a user-space function's entry and
	// return: uprobe:BINARY:FUNC, BINARY a path or a library name (libc).
	ProbeUprobe    ProbeKind = "uprobe"
	ProbeUretprobe ProbeKind = "uretprobe"
	// ProbeBpf and ProbeBpfRet are the entry and the return of loaded BPF
	// packet programs: bpf:TYPE:GLOB, TYPE tc, xdp or cgroup_skb (or *),
	// GLOB on the program's name, or its id (bpfprog.go).
	ProbeBpf    ProbeKind = "bpf"
	ProbeBpfRet ProbeKind = "bpfret"
	// ProbeTest and ProbeBench are bpftrace 0.26's test:NAME and
	// bench:NAME, run by --test and --bench (testprobe.go).
	ProbeTest  ProbeKind = "test"
	ProbeBench ProbeKind = "bench"
)

// ProbeSpec is one attach point of a probe list, such as `skb:ip_rcv*`,
// `tracepoint:skb:kfree_skb` or `interval:ms:100`.
type ProbeSpec struct {
	At   Span
	Kind ProbeKind
	// Target is the function glob (skb, kprobe, fentry...), "CAT:NAME" for a
	// tracepoint, or empty for BEGIN and END.
	Target string
	// Category and Name split a tracepoint target.
	Category, Name string
	// Period is an interval or profile probe's period in nanoseconds; Hz,
	// where set instead, a profile probe's rate per CPU.
	Period uint64
	Hz     uint64
	// Binary is a uprobe's binary as written (a path, a library name such
	// as libc, or a command found in PATH); Name is then its function (or
	// a glob of them), Offset the +OFFSET after it, and Address, where the
	// function is written as a number, that address. A kprobe's Offset is
	// its kprobe:FN+OFFSET (kprobeoffset.go).
	Binary  string
	Offset  uint64
	Address uint64
	// ProgID is, on a bpf: or bpfret: spec naming a program by its id
	// (bpf:tc:42), that id; Category is then the program type and Name
	// "*" or, as bpftrace's fentry:bpf:ID:NAME, the name it must have.
	ProgID uint32
	Text   string
	// Raw is set on bpftrace's rawtracepoint:[MODULE:]NAME, a tracepoint
	// (Kind ProbeTracepoint, Category "*") read by its raw arguments only:
	// args.NAME as the kernel's prototype names them, arg0..argN.
	Raw bool
}

// Probe is a probe list, an optional predicate and an action block.
type Probe struct {
	At    Span
	Specs []*ProbeSpec
	Pred  Expr // nil when there is none
	Body  *Block
	// Implicit is set on a probe a pass added, not written in the script
	// (passes.ExitAfterBegin's begin { exit() }): not one of the probes
	// "Attaching N probes" counts.
	Implicit bool
}

// Block is a sequence of statements in `{ }` or `< >`.
type Block struct {
	At    Span
	Angle bool
	Stmts []Stmt
}

// ExprStmt evaluates an expression for its effect, e.g. a call.
type ExprStmt struct {
	At Span
	X  Expr
}

// AssignStmt is `target op value`, with op one of = += -= ... ; `x++` is
// lowered to `x += 1`.
type AssignStmt struct {
	At     Span
	Target Expr // *MapExpr or *VarExpr
	Op     string
	Value  Expr
}

// LetStmt is bpftrace's declaration `let $x;`, `let $x = value;` or
// `let $x: type [= value];`. Type and Ptr are a CastExpr's; Type is empty
// when none is written, Value nil when no value is: a variable declared
// without either takes its type from its first assignment.
type LetStmt struct {
	At       Span
	Var      *VarExpr
	Type     string
	Ptr      int
	TypeSpan Span
	Value    Expr
}

// IfStmt is `if (cond) { ... } else ...`.
type IfStmt struct {
	At   Span
	Cond Expr
	Then *Block
	Else Stmt // nil, *Block or *IfStmt
}

// IntLit is an integer literal.
type IntLit struct {
	At    Span
	Value uint64
}

// StrLit is a string literal with its escapes decoded.
type StrLit struct {
	At    Span
	Value string
}

// IPLit is an IPv4 or IPv6 address literal.
type IPLit struct {
	At   Span
	Addr netip.Addr
}

// CIDRLit is an address prefix literal such as 10.0.0.0/8, used with `in`.
type CIDRLit struct {
	At     Span
	Prefix netip.Prefix
}

// Ident is a bare name: a builtin field, a context value or a constant.
type Ident struct {
	At   Span
	Name string
}

// VarExpr is a scratch variable `$name`.
type VarExpr struct {
	At   Span
	Name string
}

// PosParam is a positional parameter `$1`; N is 0 for `$#`, the count.
type PosParam struct {
	At    Span
	N     int
	Count bool
}

// MapExpr is `@name` or `@name[k1, k2]`.
type MapExpr struct {
	At   Span
	Name string
	Keys []Expr
}

// CallExpr is `name(args...)`.
type CallExpr struct {
	At       Span
	Name     string
	NameSpan Span
	Args     []Expr
	// Assert marks the errorf an assert(cond, msg) becomes: it prints
	// bpftrace's "assert failed" lines (check/diagfmt.go).
	Assert bool
}

// FieldExpr is `x->name` (Arrow) or `x.name`.
type FieldExpr struct {
	At       Span
	X        Expr
	Name     string
	NameSpan Span
	Arrow    bool
}

// IndexExpr is `x[i]` on an array or pointer.
type IndexExpr struct {
	At    Span
	X     Expr
	Index Expr
}

// UnaryExpr is `op x` with op one of ! ~ - + *.
type UnaryExpr struct {
	At Span
	Op string
	X  Expr
}

// BinaryExpr is `x op y`, including `x in cidr`.
type BinaryExpr struct {
	At     Span
	Op     string
	OpSpan Span
	X, Y   Expr
}

// CastExpr is `(struct sock *)x` or `(uint32)x`: Type is "struct sock",
// "union NAME" or an integer type name, Ptr the number of stars. Array
// is bpftrace's array cast, `(int8[8])x`: an array of Len of the type
// (Len 0 where it is written `(int8[])x`, the operand's size).
type CastExpr struct {
	At    Span
	Type  string
	Ptr   int
	X     Expr
	Array bool
	Len   int
}

// TypeOfExpr is bpftrace's sizeof(TYPE), sizeof(x), offsetof(TYPE, a.b) or
// offsetof(x, a.b): Op is "sizeof" or "offsetof"; Type and Ptr are a
// CastExpr's (Type empty where X is the operand); Fields the member path.
type TypeOfExpr struct {
	At       Span
	Op       string
	Type     string
	Ptr      int
	TypeSpan Span
	X        Expr
	Fields   []string
}

// CondExpr is `cond ? then : else`.
type CondExpr struct {
	At               Span
	Cond, Then, Else Expr
}

// ParenExpr is `(x)`; kept so that spans and printed names match the source.
type ParenExpr struct {
	At Span
	X  Expr
}

func (*IntLit) exprNode()     {}
func (*StrLit) exprNode()     {}
func (*IPLit) exprNode()      {}
func (*CIDRLit) exprNode()    {}
func (*Ident) exprNode()      {}
func (*VarExpr) exprNode()    {}
func (*PosParam) exprNode()   {}
func (*MapExpr) exprNode()    {}
func (*CallExpr) exprNode()   {}
func (*FieldExpr) exprNode()  {}
func (*IndexExpr) exprNode()  {}
func (*UnaryExpr) exprNode()  {}
func (*BinaryExpr) exprNode() {}
func (*CondExpr) exprNode()   {}
func (*CastExpr) exprNode()   {}
func (*TypeOfExpr) exprNode() {}
func (*ParenExpr) exprNode()  {}

func (*ExprStmt) stmtNode()   {}
func (*AssignStmt) stmtNode() {}
func (*IfStmt) stmtNode()     {}
func (*LetStmt) stmtNode()    {}
func (*Block) stmtNode()      {}

// Unparen strips any parentheses around an expression.
func Unparen(e Expr) Expr {
	for {
		p, ok := e.(*ParenExpr)
		if !ok {
			return e
		}
		e = p.X
	}
}

// Span returns the source span of the node.
func (n *Script) Span() Span { return n.At }

// Span returns the source span of the node.
func (n *ProbeSpec) Span() Span { return n.At }

// Span returns the source span of the node.
func (n *Probe) Span() Span { return n.At }

// Span returns the source span of the node.
func (n *Block) Span() Span { return n.At }

// Span returns the source span of the node.
func (n *ExprStmt) Span() Span { return n.At }

// Span returns the source span of the node.
func (n *AssignStmt) Span() Span { return n.At }

// Span returns the source span of the node.
func (n *IfStmt) Span() Span { return n.At }

// Span returns the source span of the node.
func (n *LetStmt) Span() Span { return n.At }

// Span returns the source span of the node.
func (n *IntLit) Span() Span { return n.At }

// Span returns the source span of the node.
func (n *StrLit) Span() Span { return n.At }

// Span returns the source span of the node.
func (n *IPLit) Span() Span { return n.At }

// Span returns the source span of the node.
func (n *CIDRLit) Span() Span { return n.At }

// Span returns the source span of the node.
func (n *Ident) Span() Span { return n.At }

// Span returns the source span of the node.
func (n *VarExpr) Span() Span { return n.At }

// Span returns the source span of the node.
func (n *PosParam) Span() Span { return n.At }

// Span returns the source span of the node.
func (n *MapExpr) Span() Span { return n.At }

// Span returns the source span of the node.
func (n *CallExpr) Span() Span { return n.At }

// Span returns the source span of the node.
func (n *FieldExpr) Span() Span { return n.At }

// Span returns the source span of the node.
func (n *IndexExpr) Span() Span { return n.At }

// Span returns the source span of the node.
func (n *UnaryExpr) Span() Span { return n.At }

// Span returns the source span of the node.
func (n *BinaryExpr) Span() Span { return n.At }

// Span returns the source span of the node.
func (n *CondExpr) Span() Span { return n.At }

// Span returns the source span of the node.
func (n *ParenExpr) Span() Span { return n.At }

// Span returns the source span of the node.
func (n *CastExpr) Span() Span   { return n.At }
func (n *TypeOfExpr) Span() Span { return n.At }
