package runtime

import (
	"io"
	"os"

	"github.com/skbtrace/skbtrace/codegen"
)

// cat appends what bpftrace's cat("file", args...) prints when its record
// is printed: the file (its name formatted as printf formats it) as it is
// then, up to the event's MaxBytes; with -f json, {"type": "cat", "data":
// "..."}. A file that cannot be read is a warning on stderr, as bpftrace's.
func (p *printer) cat(dst []byte, ev *codegen.Event, b []byte) []byte {
	p.scratch = p.printf(p.scratch[:0], ev, b)
	name := string(p.scratch)
	f, err := os.Open(name)
	if err != nil {
		p.warnf("cat: %v", err)
		return dst
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, int64(ev.MaxBytes)))
	if err != nil {
		p.warnf("cat: read %s: %v", name, err)
	}
	if p.json {
		dst = append(dst, `{"data":`...)
		dst = appendJSONString(dst, data)
		return append(dst, `,"type":"cat"}`+"\n"...)
	}
	return append(dst, data...)
}

// warnf says on stderr (Options.Warn) what the printer could not do.
func (p *printer) warnf(format string, args ...any) {
	if p.warn != nil {
		p.warn(format, args...)
	}
}
