package codegen_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/skbtrace/skbtrace/codegen"
)

// TestOneMapGivesWayAtTheLimit: a probe of 64 keyed count() maps, the
// kernel's limit, compiles without the one map (which would make 65) and
// loads; with 63 it uses the one map.
func TestOneMapGivesWayAtTheLimit(t *testing.T) {
	for _, c := range []struct {
		maps int
		one  bool
	}{{63, true}, {64, false}} {
		var b strings.Builder
		b.WriteString("tracepoint:skb:kfree_skb { ")
		for i := range c.maps {
			fmt.Fprintf(&b, "@m%d[len] = count(); ", i)
		}
		b.WriteString("}")
		out := compile(t, b.String())
		uses := false
		for _, ins := range out.Programs[0].Prog.Instructions {
			uses = uses || ins.Reference() == codegen.OneMap
		}
		if uses != c.one {
			t.Errorf("%d maps: uses the one map %v, want %v", c.maps, uses, c.one)
		}
		load(t, out)
	}
}
