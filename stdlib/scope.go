package stdlib

import "github.com/skbtrace/skbtrace/lang/types"

// ScopeFunc is the internal function the pod filters (--pod, --namespace,
// --container, --netns) put in front of every probe's predicate:
// scope.netns(inode) is true where the network namespace is one they let
// through (codegen.ScopeMap); scope.netns(inode, otherwise) tests otherwise
// where inode is 0, evaluating it only then. Its name cannot be written in
// a script.
const ScopeFunc = "scope.netns"

var scopeFuncs = []*Func{
	{Name: ScopeFunc, Sig: "scope.netns(inode [, otherwise])", Doc: "whether the pod filters let this network namespace through", Internal: true,
		Infer: func(c Call) types.Type {
			if arity(c, "scope.netns(inode [, otherwise])", 1, 2) {
				for i := range c.NArgs() {
					intArg(c, i, "scope.netns")
				}
			}
			return types.Bool
		}},
}
