package passes_test

import (
	"strings"
	"testing"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/passes"
)

// answers gives each has() call of s the answer named by its argument's
// text (args.reason, "tracepoint:sock:x"); those not named are undecided.
func answers(s *lang.Script, by map[string]bool) map[*lang.CallExpr]bool {
	has := map[*lang.CallExpr]bool{}
	lang.Inspect(s, func(n lang.Node) bool {
		if c, ok := n.(*lang.CallExpr); ok && c.Name == "has" && len(c.Args) == 1 {
			if v, ok := by[s.Src.Slice(c.Args[0].Span())]; ok {
				has[c] = v
			}
		}
		return true
	})
	return has
}

// TestPruneHas checks the tree PruneHas returns for has()'s answers: the
// branch taken in place of each if it decides (in loops and else chains
// too), the has() operands out of a predicate, a probe whose predicate
// they rule out dropped; and the tree it was given unchanged.
func TestPruneHas(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		by           map[string]bool
		want         string
	}{
		{"if taken", `BEGIN { if (has(args.a)) { print(1) } else { print(2) } print(3) }`,
			map[string]bool{"args.a": true}, `BEGIN { { print(1) } print(3) }`},
		{"else taken", `BEGIN { if (has(args.a)) { print(1) } else { print(2) } }`,
			map[string]bool{"args.a": false}, `BEGIN { { print(2) } }`},
		{"no branch", `BEGIN { print(0); if (has(args.a)) { print(1) } }`,
			map[string]bool{"args.a": false}, `BEGIN { print(0) { } }`},
		{"negated, in parentheses", `BEGIN { if (!(has(args.a))) { print(1) } }`,
			map[string]bool{"args.a": true}, `BEGIN { { } }`},
		{"else if chain", `BEGIN { if ($x) { print(0) } else if (has(args.a)) { print(1) } else if (has(args.b)) { print(2) } }`,
			map[string]bool{"args.a": false, "args.b": true}, `BEGIN { if ($x) { print(0) } else { print(2) } }`},
		{"in loops", `BEGIN { for ($i : 0..2) { while ($x) { unroll(2) { if (has(args.a)) { print(1) } } } } }`,
			map[string]bool{"args.a": true}, `BEGIN { for ($i : 0..2) { while ($x) { unroll(2) { { print(1) } } } } }`},
		{"nested, inner decided", `BEGIN { if (has(args.a)) { if (has(args.b)) { print(1) } else { print(2) } } }`,
			map[string]bool{"args.a": true, "args.b": false}, `BEGIN { { { print(2) } } }`},
		{"undecided stays", `BEGIN { if (has(args.a) && $x) { print(1) } }`,
			map[string]bool{}, `BEGIN { if (has(args.a) && $x) { print(1) } }`},
		{"predicate kept, has() out", `BEGIN /has("tracepoint:a:b") && $x > 1/ { print(1) }`,
			map[string]bool{`"tracepoint:a:b"`: true}, `BEGIN /$x > 1/ { print(1) }`},
		{"predicate, has() between", `BEGIN /$x > 1 && has(args.a) && $y/ { print(1) }`,
			map[string]bool{"args.a": true}, `BEGIN /$x > 1 && $y/ { print(1) }`},
		{"predicate all has()", `BEGIN /has(args.a) && (has(args.b))/ { print(1) }`,
			map[string]bool{"args.a": true, "args.b": true}, `BEGIN { print(1) }`},
		{"probe ruled out", `BEGIN /$x && !has(args.a)/ { print(1) } END { print(2) }`,
			map[string]bool{"args.a": true}, `END { print(2) }`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := parse(t, tc.script)
			got := passes.PruneHas(s, answers(s, tc.by))
			wantShape(t, got, tc.want)
			unchanged(t, s)
		})
	}
}

// TestPruneHasSharesWhatItKeeps checks that PruneHas copies only what is
// above a change: the script it was given where nothing changes, a probe
// it does not touch as it was, and its nodes below a change.
func TestPruneHasSharesWhatItKeeps(t *testing.T) {
	s := parse(t, `BEGIN { print(0) }
END { print(1); if (has(args.a)) { print(2) } }`)
	if got := passes.PruneHas(s, nil); got != s {
		t.Error("without answers, PruneHas did not return the script it was given")
	}
	if got := passes.PruneHas(s, answers(s, map[string]bool{"args.b": true})); got != s {
		t.Error("with no has() of the script decided, PruneHas did not return the script it was given")
	}
	got := passes.PruneHas(s, answers(s, map[string]bool{"args.a": true}))
	if got == s || got.Probes[1] == s.Probes[1] || got.Probes[1].Body == s.Probes[1].Body {
		t.Fatal("PruneHas changed nothing above the if it replaced")
	}
	if got.Probes[0] != s.Probes[0] {
		t.Error("the probe without has() was copied")
	}
	if got.Probes[1].Body.Stmts[0] != s.Probes[1].Body.Stmts[0] {
		t.Error("the statement before the if was copied")
	}
	if then := s.Probes[1].Body.Stmts[1].(*lang.IfStmt).Then; got.Probes[1].Body.Stmts[1] != then {
		t.Error("the if was not replaced by its own then block")
	}
}

// TestPrunePredAsksInOrder checks that PrunePred asks about the operands
// of && left to right and no further once one is false, as the checker
// relies on (a has() after one that rules the probe out is not
// evaluated, nor its errors reported).
func TestPrunePredAsksInOrder(t *testing.T) {
	s := parse(t, `BEGIN /has(args.a) && $x && has(args.b) && has(args.c)/ { }`)
	var asked []string
	decide := func(e lang.Expr) (bool, bool) {
		c, ok := e.(*lang.CallExpr)
		if !ok {
			return false, false
		}
		name := s.Src.Slice(c.Args[0].Span())
		asked = append(asked, name)
		return name != "args.b", true
	}
	pred, keep := passes.PrunePred(s.Probes[0].Pred, decide)
	if keep || pred != nil {
		t.Errorf("kept %v (%v), want the probe ruled out", keep, pred)
	}
	if want := "args.a args.b"; strings.Join(asked, " ") != want {
		t.Errorf("asked about %q, want %q", asked, want)
	}
}
