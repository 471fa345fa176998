package output

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/lang/types"
)

// flushAt is how much formatted output the printer holds before writing it
// out while records keep coming; it also writes whenever the buffer of
// records drains, so rare events are seen at once.
const flushAt = 64 << 10

// Config configures a Printer.
type Config struct {
	// Format names the output format (Formats lists them); "" is text.
	Format string
	// Values formats values; nil: NewValues'.
	Values *Values
	// Control acts on exit, print(@m), clear(@m) and zero(@m) records,
	// after the lines before them are written out.
	Control func(ev *codegen.Event) error
	// Records, where set, counts every record read.
	Records *atomic.Uint64
	// Rets are the return classes of skbret: functions, by name.
	Rets map[string]codegen.RetClass
	// Warn says on stderr what could not be printed (a file cat() could
	// not read); nil: nothing is said.
	Warn func(format string, args ...any)
	// Late hands over the events of programs attached while tracing.
	Late *Late
	// Capture receives capture()'s frames as pcapng, Snaplen bytes at
	// most each; nil: capture() records are an error.
	Capture io.Writer
	Snaplen int
	// Truncated, where set, counts the frames Capture got cut to Snaplen.
	Truncated *atomic.Uint64
}

// Printer decodes event records and writes them out through its format.
// Lines are appended to one buffer, written when the reader has nothing
// more pending, when the buffer is full, before a control record acts and
// at the end: no allocation and no write per event.
type Printer struct {
	w      io.Writer
	buf    []byte
	events []*codegen.Event
	fmt    *Values
	// f is the output format: print records, printf's lines and maps.
	f Formatter
	// control acts on exit, print(@m), clear(@m) and zero(@m) records.
	control func(ev *codegen.Event) error
	// exited is set by the first exit() record: from then on only END's
	// records are printed, as bpftrace does.
	exited bool
	// records, where set, counts every record read.
	records *atomic.Uint64
	// boot is the wall-clock time of monotonic zero, for print's timestamps.
	boot time.Time
	// verbs are each printf event's conversions, parsed once.
	verbs map[*codegen.Event][]verbFmt
	// jsonArgs are each print event's arguments in JSON's key order.
	jsonArgs map[*codegen.Event][]codegen.EventArg
	// funcs caches function names by address.
	funcs map[uint64]string
	// scratch holds a line being made and a value while JSON quotes it.
	scratch []byte
	// pcap receives capture() records (nil without Config.Capture): a
	// sink beside the format.
	pcap *pcapngWriter
	// rets are the return classes of skbret: functions, by name.
	rets map[string]codegen.RetClass
	// warn says on stderr what could not be printed; nil: nothing is said.
	warn func(format string, args ...any)
	// late hands over the events of programs attached while tracing.
	late *Late
	// rot is the output where it rotates (-o with -C, -G, -W): the
	// lines are written out once they fill its file, and it rotates
	// only before a write, between whole records.
	rot *Rotator
	// werr is a write error blockDone met, returned by the next flush.
	werr error
}

// New is a printer of events to w in cfg's format, which it looks up in
// the registry (formats.go).
func New(w io.Writer, events []*codegen.Event, cfg Config) (*Printer, error) {
	mk, ok := formats[cfg.Format]
	if cfg.Format == "" {
		mk, ok = formats["text"], true
	}
	if !ok {
		return nil, fmt.Errorf("no output format %q (%s)", cfg.Format, strings.Join(Formats(), ", "))
	}
	v := cfg.Values
	if v == nil {
		v = NewValues()
	}
	p := newPrinter(w, events, v)
	p.rot, _ = w.(*Rotator)
	p.f = mk(p)
	p.control, p.records, p.rets, p.warn, p.late = cfg.Control, cfg.Records, cfg.Rets, cfg.Warn, cfg.Late
	if p.control == nil {
		p.control = func(*codegen.Event) error { return nil }
	}
	if cfg.Capture != nil {
		var err error
		if p.pcap, err = newPcapngWriter(cfg.Capture, cfg.Snaplen, v.boot); err != nil {
			return nil, fmt.Errorf("write the pcapng header: %w", err)
		}
		p.pcap.vals, p.pcap.truncated = v, cfg.Truncated
	}
	return p, nil
}

func newPrinter(w io.Writer, events []*codegen.Event, f *Values) *Printer {
	p := &Printer{w: w, fmt: f, boot: f.boot,
		buf: make([]byte, 0, flushAt+4096), verbs: map[*codegen.Event][]verbFmt{},
		jsonArgs: map[*codegen.Event][]codegen.EventArg{}, funcs: map[uint64]string{},
		scratch: make([]byte, 0, 512)}
	for _, ev := range events {
		p.addEvent(ev)
	}
	return p
}

// addEvent adds an event, whose id is the next, with what printing it
// takes parsed once.
func (p *Printer) addEvent(ev *codegen.Event) {
	p.events = append(p.events, ev)
	switch ev.Kind {
	case codegen.EventPrintf, codegen.EventCat:
		p.verbs[ev] = parseVerbs(ev.Verbs, p.fmt.fullEnums)
	case codegen.EventPrint:
		p.jsonArgs[ev] = jsonOrder(ev.Args)
	}
}

// jsonOrder is the order json.Marshal gives a map of the arguments by
// name: sorted, the last of equal names winning.
func jsonOrder(args []codegen.EventArg) []codegen.EventArg {
	var out []codegen.EventArg
	for i, a := range args {
		if !slices.ContainsFunc(args[i+1:], func(b codegen.EventArg) bool { return b.Name == a.Name }) {
			out = append(out, a)
		}
	}
	slices.SortStableFunc(out, func(a, b codegen.EventArg) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Reader reads event records: the session's ring buffer or perf event
// array.
type Reader interface {
	// Next returns the next record; done reports a flush or close.
	Next() (rec []byte, done bool, err error)
	// Pending reports whether Next has a record without waiting; the
	// printer writes its output out before Next waits.
	Pending() bool
	// SetDeadline makes Next return os.ErrDeadlineExceeded at t (zero:
	// never).
	SetDeadline(t time.Time)
}

// batchDelay is how long the reader lets records gather after it has
// drained the buffer and written its lines out, before it waits for more.
// The kernel wakes the reader for a record that finds the buffer empty: a
// reader that drains each record as it comes is woken once per record, a
// wakeup and a write costing more than printing it. Pausing here bounds
// wakeups to one per batchDelay under load; a rare event is still printed
// the moment it comes, and the next one at most batchDelay later.
const batchDelay = 500 * time.Microsecond

// Read prints records until the reader is flushed and drained, or
// closed. The output is written whenever nothing more is pending; the
// format's open blocks (a timeline's, a graph's) when they go quiet and at
// the end.
func (p *Printer) Read(rd Reader) error {
	read := 0
	for {
		if read > 0 && !rd.Pending() {
			p.buf = p.f.Flush(p.buf, time.Now().Add(-TimelineQuiet), false)
			if err := p.flush(); err != nil {
				return err
			}
			time.Sleep(batchDelay)
			read = 0
		}
		// Wake when the oldest open block goes quiet.
		rd.SetDeadline(p.f.Deadline())
		rec, done, err := rd.Next()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			read = 1 // the quiet blocks are printed at the top
			continue
		}
		if done || err != nil {
			p.buf = p.f.Flush(p.buf, time.Time{}, true)
			if ferr := p.flush(); err == nil {
				err = ferr
			}
			return err
		}
		read++
		if p.records != nil {
			p.records.Add(1)
		}
		if err := p.record(rec); err != nil {
			return err
		}
	}
}

// flush writes out the lines formatted so far.
func (p *Printer) flush() error {
	if p.pcap != nil {
		if err := p.pcap.Flush(); err != nil {
			return err
		}
	}
	if p.werr != nil {
		return p.werr
	}
	if len(p.buf) == 0 {
		return nil
	}
	if p.rot != nil {
		if _, err := p.rot.RotateIfDue(); err != nil {
			return err
		}
	}
	_, err := p.w.Write(p.buf)
	p.buf = p.buf[:0]
	return err
}

func (p *Printer) record(b []byte) error {
	if len(b) < 8 {
		return fmt.Errorf("short record of %d bytes", len(b))
	}
	id := binary.LittleEndian.Uint64(b)
	if id >= uint64(len(p.events)) {
		// A program attached while tracing (bpfwatch.go).
		p.takeLate()
	}
	if id >= uint64(len(p.events)) || len(b) < p.events[id].Size {
		return fmt.Errorf("record with unknown id %d", id)
	}
	ev := p.events[id]
	if p.exited && !ev.End {
		return nil
	}
	switch ev.Kind {
	case codegen.EventExit, codegen.EventPrintMap, codegen.EventClearMap, codegen.EventZeroMap:
		p.exited = p.exited || ev.Kind == codegen.EventExit
		// The lines before the control record come out before what it prints.
		if err := p.flush(); err != nil {
			return err
		}
		if ev.CodeInRecord && len(b) >= 16 {
			withCode := *ev
			withCode.Code = int(int32(binary.LittleEndian.Uint64(b[8:])))
			return p.control(&withCode)
		}
		return p.control(ev)
	}
	switch ev.Kind {
	case codegen.EventCapture:
		if p.pcap == nil {
			return fmt.Errorf("capture() needs -w FILE")
		}
		return p.pcap.frame(b, p.where(ev, b))
	case codegen.EventBlock:
		if err := p.printfBlock(b); err != nil {
			return err
		}
	case codegen.EventPrintf:
		p.scratch = p.printf(p.scratch[:0], ev, b)
		p.buf = p.f.Line(p.buf, lineKind(ev), p.scratch)
	case codegen.EventJoin:
		p.buf = p.f.Line(p.buf, LineJoin, p.join(ev, b))
	case codegen.EventCat:
		if data, ok := p.cat(ev, b); ok {
			p.buf = p.f.Line(p.buf, LineCat, data)
		}
	default:
		p.buf = p.f.Record(p.buf, ev, b)
	}
	if len(p.buf) >= flushAt || p.rot != nil && len(p.buf) > 0 && p.rot.Due(len(p.buf)) {
		return p.flush()
	}
	return nil
}

// blockDone is given the output after each block a grouping format
// (--timeline, --graph) appends at once: where it fills a rotating file,
// it is written out there, so that the next block may go to the next file.
func (p *Printer) blockDone(dst []byte) []byte {
	if p.rot == nil || len(dst) == 0 || !p.rot.Due(len(dst)) {
		return dst
	}
	p.buf = dst
	if err := p.flush(); err != nil {
		p.werr = err
	}
	return p.buf
}

// lineKind is LineTime for time()'s records (codegen's one verb, the
// event's time), LinePrintf for printf's.
func lineKind(ev *codegen.Event) LineKind {
	if len(ev.Args) == 1 && ev.Args[0].Name == "time" && ev.Args[0].Type.Fmt == types.FmtTime && ev.Args[0].Offset == 8 {
		return LineTime
	}
	return LinePrintf
}

// Maps prints the maps at exit in the printer's format, in the order
// given (the script's).
func (p *Printer) Maps(w io.Writer, maps []MapData) error { return p.f.Maps(w, maps) }

// Map prints one map for print(@m, top, div) in the printer's format.
func (p *Printer) Map(w io.Writer, m MapData, view View) error { return p.f.Map(w, m, view) }
