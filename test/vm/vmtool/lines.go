package main

import (
	"bufio"
	"io"
	"strings"
	"sync"
	"time"
)

// lineLog collects the lines of one stream as they come, so a case can wait on
// a line appearing (bounded by a deadline) instead of sleeping.
type lineLog struct {
	mu      sync.Mutex
	lines   []string
	changed chan struct{} // closed and replaced at every new line
	first   time.Time     // when the first line came
}

func newLineLog() *lineLog { return &lineLog{changed: make(chan struct{})} }

// fill reads r to its end, a line at a time.
func (l *lineLog) fill(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// A progress line on a terminal ends in \r; keep the last state of it.
		line := sc.Text()
		if i := strings.LastIndexByte(strings.TrimRight(line, "\r"), '\r'); i >= 0 {
			line = line[i+1:]
		}
		l.mu.Lock()
		if l.first.IsZero() {
			l.first = time.Now()
		}
		l.lines = append(l.lines, strings.TrimRight(line, "\r"))
		close(l.changed)
		l.changed = make(chan struct{})
		l.mu.Unlock()
	}
}

// snapshot returns the lines so far.
func (l *lineLog) snapshot() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// waitFor waits until ok holds for the lines, the stream ends (done is closed),
// or the deadline passes; it reports whether ok held.
func (l *lineLog) waitFor(ok func([]string) bool, done <-chan struct{}, deadline time.Time) bool {
	for {
		l.mu.Lock()
		held, changed := ok(l.lines), l.changed
		l.mu.Unlock()
		if held {
			return true
		}
		select {
		case <-changed:
		case <-done:
			return ok(l.snapshot())
		case <-time.After(time.Until(deadline)):
			return false
		}
	}
}

// firstAt is when the first line came (zero: none yet).
func (l *lineLog) firstAt() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.first
}
