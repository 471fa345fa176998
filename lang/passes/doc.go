// Package passes holds the rewrites of a script's tree that run between
// the checker and the code generator, each a function of its own: it
// takes a tree and the answers it needs (what the checker decided, which
// probes have an skb) and returns a new tree. The tree it is given is not
// changed: the new one shares every node the pass leaves as it is, and
// copies those above a change (copy-on-write), so a tree checked once can
// be pruned or rewritten again, and a pass with nothing to do returns the
// tree it was given.
//
//   - DropSpecs takes out the probe specs missing_probes drops;
//   - PruneHas keeps, of each has() decision, what this kernel runs;
//   - Filter ANDs --filter's pcap() into the skb probes' predicates;
//   - Scope ANDs the pod filters' scope.netns() test into the predicates
//     of every probe on events;
//   - Capture starts each skb probe with -w's capture().
//
// The checker records the answers (check.Info's Has and Missing) and
// check.Prune runs the first two; the pipeline runs the last three.
package passes
