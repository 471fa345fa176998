package names

import (
	"testing"
)

// BenchmarkNetnsLookup shows a lookup is a map read: no I/O, no
// allocation, on a hit and on a miss (which nudges the refresher, at most
// every 250 ms).
func BenchmarkNetnsLookup(b *testing.B) {
	r := New(Options{})
	t := &tables{netns: map[uint64]Identity{}}
	for i := uint64(0); i < 1000; i++ {
		t.netns[4026531840+i] = Identity{Namespace: "default", Pod: "web", Containers: []string{"web"}}
	}
	r.snap.Store(t)
	b.Run("hit", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, ok := r.Netns(4026531840 + uint64(i%1000)); !ok {
				b.Fatal("miss")
			}
		}
	})
	b.Run("miss", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, ok := r.Netns(1 + uint64(i%1000)); ok {
				b.Fatal("hit")
			}
		}
	})
}
