package runtime

import (
	"bytes"

	"github.com/skbtrace/skbtrace/codegen"
)

// join appends a join() record's line: its strings up to the first empty
// one, joined by the call's separator, and a newline; with -f json,
// bpftrace's {"type": "join", "data": "..."}.
func (p *printer) join(dst []byte, ev *codegen.Event, b []byte) []byte {
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
	if p.json {
		dst = append(dst, `{"data":`...)
		dst = appendJSONString(dst, line)
		return append(dst, `,"type":"join"}`+"\n"...)
	}
	return append(append(dst, line...), '\n')
}
