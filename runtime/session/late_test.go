package session

import (
	"sync/atomic"
	"testing"
)

// TestLateLeftOnceStopped: work attaching while tracing that is under way
// when tracing ends finishes, and waitLate waits for it; work not begun by
// then is left.
func TestLateLeftOnceStopped(t *testing.T) {
	s := &Session{}
	started, release := make(chan struct{}), make(chan struct{})
	var under, after atomic.Bool
	s.late(func() {
		close(started)
		<-release
		under.Store(true)
	})
	<-started
	go func() { close(release) }()
	s.waitLate()
	if !under.Load() {
		t.Fatal("waitLate returned before the work under way ended")
	}
	s.late(func() { after.Store(true) })
	s.waitLate()
	if after.Load() {
		t.Error("work begun after tracing ended ran")
	}
}
