package output

import (
	"sync"

	"github.com/skbtrace/skbtrace/codegen"
)

// Late hands the printer the events of programs attached while tracing
// (the session's bpf: watcher compiles them): their records come after
// Add, and the printer takes the events when it meets an id it does not
// know.
type Late struct {
	mu     sync.Mutex
	events []*codegen.Event
	names  []string
}

// Add hands over a late compile's events and the probe names they bring.
func (l *Late) Add(late *codegen.Late) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, late.Events...)
	l.names = late.ProbeNames
}

// takeLate adds the events attached while tracing, with the probe names
// they bring.
func (p *Printer) takeLate() {
	if p.late == nil {
		return
	}
	p.late.mu.Lock()
	events, names := p.late.events, p.late.names
	p.late.events = nil
	p.late.mu.Unlock()
	for _, ev := range events {
		p.addEvent(ev)
	}
	if names != nil {
		p.fmt.probeNames = names
	}
}
