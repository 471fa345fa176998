package check

import (
	"testing"

	"github.com/skbtrace/skbtrace/internal/testkit"
)

// TestFragLayout reads skb_frag_t's layout from the running kernel's BTF.
func TestFragLayout(t *testing.T) {
	l := fragLayout(testkit.KernelBTF(t))
	if l == nil {
		t.Fatal("no layout")
	}
	if l.MaxFrags < 17 || l.FragSize < 12 || l.LenSize != 4 || l.Page == l.Len || l.Len == l.Off {
		t.Errorf("layout %+v", *l)
	}
	t.Logf("%+v", *l)
}
