package lang

// ForStmt is bpftrace's for loop: over a map's elements, `for ($kv : @m)
// { ... }`, where $kv is the tuple (key, value), or over a range of
// integers, `for ($i : start..end) { ... }`, start included, end not.
// Map is set for the first; Start and End for the second.
type ForStmt struct {
	At    Span
	Var   *VarExpr
	Map   *MapExpr
	Start Expr
	End   Expr
	Body  *Block
}

// JumpStmt is `break` or `continue` (Op) in a loop's body, or `return`,
// which ends the probe's action.
type JumpStmt struct {
	At Span
	Op string
}

// WhileStmt is bpftrace's `while (cond) { ... }`: a loop the verifier
// must see end.
type WhileStmt struct {
	At   Span
	Cond Expr
	Body *Block
}

// UnrollStmt is bpftrace's `unroll(n) { ... }`: the block n times, n a
// constant.
type UnrollStmt struct {
	At    Span
	Count Expr
	Body  *Block
}

func (*ForStmt) stmtNode()    {}
func (*JumpStmt) stmtNode()   {}
func (*WhileStmt) stmtNode()  {}
func (*UnrollStmt) stmtNode() {}

// Span returns the source span of the node.
func (n *WhileStmt) Span() Span { return n.At }

// Span returns the source span of the node.
func (n *UnrollStmt) Span() Span { return n.At }

// Span returns the source span of the node.
func (n *ForStmt) Span() Span { return n.At }

// Span returns the source span of the node.
func (n *JumpStmt) Span() Span { return n.At }
