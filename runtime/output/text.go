package output

import (
	"encoding/binary"
	"io"
	"strconv"
	"time"

	"github.com/skbtrace/skbtrace/codegen"
)

// text is skbtrace's default format: print's records as pwru's columns
// (time, CPU, skb address, function, then the values as name=value),
// printf's and cat's text as it is, join's line and a newline, maps as
// `@name[key]: value` sorted by value and histograms as bars.
type text struct{ p *Printer }

// Record appends pwru's columns: time, CPU, skb address, function, then
// the values as name=value.
func (f text) Record(dst []byte, ev *codegen.Event, b []byte) []byte {
	p := f.p
	u := func(off int) uint64 { return binary.LittleEndian.Uint64(b[off:]) }
	dst = p.boot.Add(time.Duration(u(codegen.PrintTime))).AppendFormat(dst, "15:04:05.000000")
	dst = append(dst, ' ')
	dst = appendPadded(dst, strconv.AppendUint(p.scratch[:0], u(codegen.PrintCPU), 10), 3, false, ' ')
	dst = append(dst, " 0x"...)
	dst = appendPadded(dst, strconv.AppendUint(p.scratch[:0], u(codegen.PrintSkb), 16), 16, false, '0')
	dst = append(dst, ' ')
	return p.appendHop(dst, p.where(ev, b), ev, b)
}

// Line appends the text as it is; join's with a newline.
func (text) Line(dst []byte, kind LineKind, s []byte) []byte {
	dst = append(dst, s...)
	if kind == LineJoin {
		dst = append(dst, '\n')
	}
	return dst
}

// Flush has no blocks to print.
func (text) Flush(dst []byte, _ time.Time, _ bool) []byte { return dst }

// Deadline is never: nothing waits.
func (text) Deadline() time.Time { return time.Time{} }

// Maps prints every map that holds data, a blank line between them.
func (f text) Maps(w io.Writer, maps []MapData) error { return printMaps(f.p.fmt, w, maps, false) }

// Map prints one map, as the first output (no blank line before it).
func (f text) Map(w io.Writer, m MapData, view View) error {
	_, err := printMap(f.p.fmt, w, m, true, view, false)
	return err
}
