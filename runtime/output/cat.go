package output

import (
	"errors"
	"io"
	"os"
	"strings"

	"github.com/skbtrace/skbtrace/codegen"
)

// cat is what bpftrace's cat("file", args...) prints when its record is
// printed: the file (its name formatted as printf formats it) as it is
// then, up to the event's MaxBytes; the format shows it (Line). A file
// that cannot be opened is a warning on stderr, as bpftrace's, and
// nothing printed (false); one that cannot be read whole, what was read.
func (p *Printer) cat(ev *codegen.Event, b []byte) ([]byte, bool) {
	p.scratch = p.printf(p.scratch[:0], ev, b)
	name := string(p.scratch)
	f, err := os.Open(name)
	if err != nil {
		// bpftrace's words: ERROR: failed to open file 'F' (strerror).
		why := err.Error()
		var pe *os.PathError
		if errors.As(err, &pe) {
			why = pe.Err.Error()
			if why != "" {
				why = strings.ToUpper(why[:1]) + why[1:]
			}
		}
		p.warnf("ERROR: failed to open file '%s' (%s)", name, why)
		return nil, false
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, int64(ev.MaxBytes)))
	if err != nil {
		p.warnf("cat: read %s: %v", name, err)
	}
	return data, true
}

func (p *Printer) warnf(format string, args ...any) {
	if p.warn != nil {
		p.warn(format, args...)
	}
}
