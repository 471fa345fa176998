package output

import (
	"io"
	"maps"
	"slices"
	"time"

	"github.com/skbtrace/skbtrace/codegen"
)

// Formatter is one output format: how print's records, printf's lines
// and the maps show. The printer decodes records, keeps the shared state
// (values, printf's verbs, function names) and writes the buffer out; a
// format appends to it. Record is called once per event: it appends to
// dst, never boxes a value (0 allocations per event).
type Formatter interface {
	// Record appends a print() record: pwru's columns, a JSON object, or
	// nothing yet (a timeline's or graph's hop, kept in its block).
	Record(dst []byte, ev *codegen.Event, rec []byte) []byte
	// Line appends a line printf(), cat() or join() made.
	Line(dst []byte, kind LineKind, text []byte) []byte
	// Flush appends the blocks complete or quiet since quietSince (all:
	// every open block), for formats that group records.
	Flush(dst []byte, quietSince time.Time, all bool) []byte
	// Deadline is when the oldest open block goes quiet (zero: none).
	Deadline() time.Time
	// Maps prints the maps at exit, in the script's order.
	Maps(w io.Writer, maps []MapData) error
	// Map prints one map for print(@m, top, div).
	Map(w io.Writer, m MapData, view View) error
}

// LineKind says which call made a line.
type LineKind uint8

const (
	LinePrintf LineKind = iota
	LineCat
	LineJoin
	LineTime // time()'s
)

// formats is the registry of output formats by name: a new format is a
// file with its Formatter and a line here (and its flag in cmd).
var formats = map[string]func(p *Printer) Formatter{
	"text":            func(p *Printer) Formatter { return text{p} },
	"json":            func(p *Printer) Formatter { return jsonFormat{p} },
	"bpftrace":        func(p *Printer) Formatter { return bpftrace{text: text{p}} },
	"bpftrace-events": func(p *Printer) Formatter { return bpftrace{text: text{p}, events: true} },
	"bpftrace-json":   func(p *Printer) Formatter { return bpftraceJSON{p} },
	"timeline":        func(p *Printer) Formatter { return grouped{text{p}, newTimeline(p.boot, false), p} },
	"timeline-json":   func(p *Printer) Formatter { return grouped{jsonFormat{p}, newTimeline(p.boot, true), p} },
	"graph":           func(p *Printer) Formatter { return grouped{text{p}, newGraph(p.boot, false), p} },
	"graph-json":      func(p *Printer) Formatter { return grouped{jsonFormat{p}, newGraph(p.boot, true), p} },
}

// Formats are the output formats' names, sorted.
func Formats() []string { return slices.Sorted(maps.Keys(formats)) }

// TimelineQuiet is how long a packet's block waits for another hop before
// it is printed, when its skb is not seen freed.
const TimelineQuiet = time.Second

// grouper is a format's blocks of records per packet: --timeline's
// timeline and --graph's graph.
type grouper interface {
	add(p *Printer, ev *codegen.Event, b []byte)
	// flushEach appends the blocks done; after each, done is given what
	// was appended so far and returns what to go on appending to.
	flushEach(dst []byte, quietSince time.Time, all bool, done func([]byte) []byte) []byte
	deadline() time.Time
}

// grouped is a format that groups print's records in blocks (timeline,
// graph), printing lines and maps as its base format does.
type grouped struct {
	Formatter
	g grouper
	p *Printer
}

func (f grouped) Record(dst []byte, ev *codegen.Event, rec []byte) []byte {
	f.g.add(f.p, ev, rec)
	return dst
}

func (f grouped) Flush(dst []byte, quietSince time.Time, all bool) []byte {
	return f.g.flushEach(dst, quietSince, all, f.p.blockDone)
}

func (f grouped) Deadline() time.Time { return f.g.deadline() }
