package codegen

import (
	"slices"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/stdlib"
)

// nfPlace is the statement the netfilter scan goes before: the first of
// stmts that reads hook, table or chain. Where that statement is an if
// whose condition reads none of them, and whose reads are all in one of its
// branches with none after it, the scan goes inside that branch instead, so
// that packets which take another way do not pay for the walk up the stack
// (whydrop's `if (reason == "NETFILTER_DROP") { ... table, chain }`).
func (g *gen) nfPlace(stmts []lang.Stmt) lang.Stmt {
	uses := func(n lang.Node) bool { return n != nil && g.usesKind(n, stdlib.SrcNetfilter) }
	usesStmt := func(s lang.Stmt) bool { return s != nil && uses(s) }
	for i, st := range stmts {
		if !uses(st) {
			continue
		}
		if slices.ContainsFunc(stmts[i+1:], usesStmt) {
			return st
		}
		ifs, ok := st.(*lang.IfStmt)
		if !ok || uses(ifs.Cond) {
			return st
		}
		// Into a branch that is a block (an else if is compiled as the
		// if's own statement, not a block's: the scan stays before the if).
		then, els := uses(ifs.Then), usesStmt(ifs.Else)
		if then && !els {
			return g.nfPlace(ifs.Then.Stmts)
		}
		if b, ok := ifs.Else.(*lang.Block); ok && els && !then {
			return g.nfPlace(b.Stmts)
		}
		return st
	}
	return nil
}
