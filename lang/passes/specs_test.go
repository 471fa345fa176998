package passes_test

import (
	"testing"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/passes"
)

// TestDropSpecs checks the tree DropSpecs returns: the specs named gone
// from their lists, a probe left without any gone whole, the others as
// they were (the same nodes); and the tree it was given unchanged.
func TestDropSpecs(t *testing.T) {
	s := parse(t, `kprobe:a, kprobe:b { print(1) }
kprobe:c { print(2) }
kprobe:d, kprobe:e /$x/ { print(3) }`)
	drop := map[*lang.ProbeSpec]bool{}
	for _, p := range s.Probes {
		for _, sp := range p.Specs {
			if sp.Target == "b" || sp.Target == "c" {
				drop[sp] = true
			}
		}
	}
	got := passes.DropSpecs(s, drop)
	wantShape(t, got, "kprobe:a { print(1) }\nkprobe:d, kprobe:e /$x/ { print(3) }")
	unchanged(t, s)
	if got.Probes[1] != s.Probes[2] {
		t.Error("the probe that lost no spec was copied")
	}
	if got.Probes[0].Body != s.Probes[0].Body {
		t.Error("the body of the probe that lost a spec was copied")
	}
	if passes.DropSpecs(s, nil) != s {
		t.Error("with nothing to drop, DropSpecs did not return the script it was given")
	}
}
