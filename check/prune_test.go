package check_test

import (
	"reflect"
	"testing"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/lang"
)

// pruneScript has all the checker once changed the tree for: has() in an
// if and a predicate, a spec missing_probes drops, a probe has() rules
// out, and a loop over a map, which the checker checks twice over.
const pruneScript = `config = { missing_probes = "ignore" }
tracepoint:tcp:tcp_send_reset, tracepoint:skb:no_such_tracepoint_skbtrace {
	if (has(args.reason)) { @r[args.reason] = count() } else { @r[0] = count() }
	if (!has(args.no_such_arg)) { printf("none\n") } else { print(args.no_such_arg) }
	for ($kv : @m) { print($kv) }
}
fentry:tcp_v4_rcv /has("fentry:tcp_v4_rcv") && len > 0/ { @m[len] = count() }
tracepoint:sock:sk_data_ready /has("tracepoint:no_such:no_such_skbtrace") && args.x/ { print(args.x) }
`

// TestCheckChangesNothing checks a script twice, and prunes it: the tree
// is each time the one parsed (deep equality with a fresh parse), as
// Check and Prune say.
func TestCheckChangesNothing(t *testing.T) {
	src := &lang.Source{Name: "prune.st", Text: pruneScript}
	parse := func() *lang.Script {
		s, err := lang.Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	script, fresh := parse(), parse()
	opts := check.Options{BTF: kernelBTF(t)}
	for i := range 2 {
		info, err := check.Check(script, opts)
		if err != nil {
			t.Fatalf("check %d: %v", i+1, err)
		}
		if !reflect.DeepEqual(script, fresh) {
			t.Fatalf("check %d changed the tree", i+1)
		}
		if _, _, err := check.Prune(script, info, opts); err != nil {
			t.Fatalf("prune %d: %v", i+1, err)
		}
		if !reflect.DeepEqual(script, fresh) {
			t.Fatalf("prune %d changed the tree", i+1)
		}
	}
}

// TestPruneChecksWhatItReturns checks what Prune returns: the script as
// this kernel runs it (the missing spec, the ruled-out probe and the
// branches not taken gone) and an Info of that script, whose probes and
// expressions are its own nodes; and, where nothing is pruned, the script
// and Info it was given.
func TestPruneChecksWhatItReturns(t *testing.T) {
	script, err := lang.Parse(&lang.Source{Name: "prune.st", Text: pruneScript})
	if err != nil {
		t.Fatal(err)
	}
	opts := check.Options{BTF: kernelBTF(t)}
	info, err := check.Check(script, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Has) != 4 || len(info.Missing) != 1 {
		t.Errorf("recorded %d has() answers and %d missing specs, want 4 and 1", len(info.Has), len(info.Missing))
	}
	pruned, pinfo, err := check.Prune(script, info, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(pruned.Probes) != 2 || len(pruned.Probes[0].Specs) != 1 {
		t.Fatalf("pruned to %d probes, want 2, the first with one spec", len(pruned.Probes))
	}
	if len(pinfo.Has) != 0 || len(pinfo.Missing) != 0 {
		t.Errorf("the pruned script still has %d has() and %d missing specs", len(pinfo.Has), len(pinfo.Missing))
	}
	lang.Inspect(pruned, func(n lang.Node) bool {
		switch n := n.(type) {
		case *lang.Probe:
			if pinfo.Probes[n] == nil {
				t.Errorf("probe at %v: not in the pruned script's Info", n.Span())
			}
		case *lang.CallExpr:
			if n.Name == "has" {
				t.Errorf("has() at %v left in the pruned script", n.Span())
			}
			if _, ok := pinfo.Types[n]; !ok {
				t.Errorf("call %s at %v: no type in the pruned script's Info", n.Name, n.Span())
			}
		}
		return true
	})
	plain, err := lang.Parse(&lang.Source{Name: "plain.st", Text: `fentry:tcp_v4_rcv /len > 0/ { @m[len] = count() }`})
	if err != nil {
		t.Fatal(err)
	}
	if info, err = check.Check(plain, opts); err != nil {
		t.Fatal(err)
	}
	if s, i, err := check.Prune(plain, info, opts); err != nil || s != plain || i != info {
		t.Errorf("a script without has() or missing specs was pruned (%v)", err)
	}
}
