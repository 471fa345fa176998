package check_test

import (
	"strings"
	"testing"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/internal/testkit/compiletest"
	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/runtime/kernel"
)

// TestTracepointGlob checks that a tracepoint glob stands for every
// tracepoint it matches, each its own spec, and that the probe's context
// is what all of them have.
func TestTracepointGlob(t *testing.T) {
	script, info := compiletest.Check(t, "tracepoint:skb:kfree_sk*, tracepoint:s?b:consume_skb { @[len] = count() }\n", check.Options{MatchTracepoints: kernel.MatchTracepoints})
	var got []string
	for _, si := range info.Probes[script.Probes[0]].Specs {
		got = append(got, si.Spec.Text+" "+si.Spec.Category+" "+si.Spec.Name)
	}
	want := []string{"tracepoint:skb:kfree_skb skb kfree_skb", "tracepoint:skb:consume_skb skb consume_skb"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("specs %q, want %q", got, want)
	}
	if len(script.Probes[0].Specs) != 2 || script.Probes[0].Specs[0].Text != "tracepoint:skb:kfree_sk*" {
		t.Errorf("the tree changed: %v", script.Probes[0].Specs[0].Text)
	}
}

// TestTracepointGlobBTF checks the listing without tracefs: a * category
// from BTF's raw tracepoints; a category's glob needs tracefs.
func TestTracepointGlobBTF(t *testing.T) {
	for text, want := range map[string]string{
		"tracepoint:*:kfree_sk* { @ = count() }\n":   "",
		"tracepoint:skb:kfree_sk* { @ = count() }\n": "listed by tracefs",
	} {
		script, err := lang.Parse(&lang.Source{Name: "g.st", Text: text})
		if err != nil {
			t.Fatal(err)
		}
		_, err = check.Check(script, check.Options{BTF: kernelBTF(t)})
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want %q", text, err, want)
		}
	}
}
