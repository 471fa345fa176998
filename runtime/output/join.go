package output

import (
	"bytes"

	"github.com/skbtrace/skbtrace/codegen"
)

// join is a join() record's line: its strings up to the first empty one,
// joined by the call's separator; the format shows it (Line: text adds a
// newline, JSON makes it bpftrace's {"type": "join", "data": "..."}).
func (p *Printer) join(ev *codegen.Event, b []byte) []byte {
	line := p.scratch[:0]
	for i := range codegen.JoinArgs {
		at := 8 + i*codegen.JoinArgSize
		if at+codegen.JoinArgSize > len(b) {
			break
		}
		s := b[at : at+codegen.JoinArgSize]
		if n := bytes.IndexByte(s, 0); n >= 0 {
			s = s[:n]
		}
		if len(s) == 0 {
			break
		}
		if i > 0 {
			line = append(line, ev.Sep...)
		}
		line = append(line, s...)
	}
	p.scratch = line
	return line
}
