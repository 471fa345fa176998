package session

import (
	"strings"
	"testing"
	"time"
)

// TestProgressEstimate: the attach progress line says how long is left at
// the pace so far: 100 of 400 in 10 s leaves about 30 s; at the end, none.
func TestProgressEstimate(t *testing.T) {
	var b strings.Builder
	p := &progress{w: &b, total: 400, start: time.Now().Add(-10 * time.Second)}
	p.add(100)
	if got := b.String(); !strings.Contains(got, "attaching 100/400, about 30s left") {
		t.Errorf("progress line %q, want 100/400 with about 30s left", got)
	}
	b.Reset()
	p.add(300)
	if got := b.String(); !strings.Contains(got, "attaching 400/400\033[K") {
		t.Errorf("last progress line %q, want 400/400 and no estimate", got)
	}
}
