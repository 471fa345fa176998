package session

import (
	"fmt"
	"strings"
	"time"
)

// stopClock times the steps of a session's end, from Detach to the end of
// Close, which -v says in one line ("stop 210ms: background attach 0s,
// ..."): where the time from Ctrl-C to the prompt goes.
type stopClock struct {
	began, last time.Time
	parts       []string
}

// start starts the clock, once.
func (c *stopClock) start() {
	if c.began.IsZero() {
		c.began = time.Now()
		c.last = c.began
	}
}

// mark ends the step called name, where the clock runs.
func (c *stopClock) mark(name string) {
	if c.began.IsZero() {
		return
	}
	now := time.Now()
	c.parts = append(c.parts, fmt.Sprintf("%s %v", name, now.Sub(c.last).Round(time.Millisecond)))
	c.last = now
}

// String says the steps marked, with their total.
func (c *stopClock) String() string {
	return fmt.Sprintf("stop %v: %s", c.last.Sub(c.began).Round(time.Millisecond), strings.Join(c.parts, ", "))
}
