package runtime

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/lang/types"
	"github.com/skbtrace/skbtrace/runtime/kernel"
)

// flushAt is how much formatted output the printer holds before writing it
// out while records keep coming; it also writes whenever the buffer of
// records drains, so rare events are seen at once.
const flushAt = 64 << 10

// printer decodes ring buffer records and writes them out. Lines are
// appended to one buffer, written when the reader has nothing more
// pending, when the buffer is full, before a control record acts and at
// the end: no allocation and no write per event.
type printer struct {
	w      io.Writer
	buf    []byte
	events []*codegen.Event
	fmt    *formatter
	json   bool
	// control acts on exit, print(@m), clear(@m) and zero(@m) records.
	control func(ev *codegen.Event) error
	// exited is set by the first exit() record: from then on only END's
	// records are printed, as bpftrace does.
	exited bool
	// records, where set, counts every record read (Session.Records).
	records *atomic.Uint64
	// boot is the wall-clock time of monotonic zero, for print's timestamps.
	boot time.Time
	// verbs are each printf event's conversions, parsed once.
	verbs map[*codegen.Event][]verbFmt
	// jsonArgs are each print event's arguments in JSON's key order.
	jsonArgs map[*codegen.Event][]codegen.EventArg
	// funcs caches function names by address.
	funcs map[uint64]string
	// scratch holds a value while JSON quotes it.
	scratch []byte
	// pcap receives capture() records (nil without -w).
	pcap *pcapngWriter
	// group, when set, groups print records per packet: --timeline's
	// timeline or --graph's graph.
	group grouper
	// rets are the return classes of skbret: functions, by name.
	rets map[string]codegen.RetClass
	// warn says on stderr what could not be printed (a file cat() could
	// not read); nil: nothing is said.
	warn func(format string, args ...any)
	// late hands over the events of programs attached while tracing.
	late *lateEvents
}

func newPrinter(w io.Writer, events []*codegen.Event, f *formatter, json bool) *printer {
	p := &printer{w: w, events: events, fmt: f, boot: f.boot, json: json,
		buf: make([]byte, 0, flushAt+4096), verbs: map[*codegen.Event][]verbFmt{},
		jsonArgs: map[*codegen.Event][]codegen.EventArg{}, funcs: map[uint64]string{},
		scratch: make([]byte, 0, 512)}
	p.events = nil
	for _, ev := range events {
		p.addEvent(ev)
	}
	return p
}

// addEvent adds an event, whose id is the next, with what printing it
// takes parsed once.
func (p *printer) addEvent(ev *codegen.Event) {
	p.events = append(p.events, ev)
	switch ev.Kind {
	case codegen.EventPrintf, codegen.EventCat:
		p.verbs[ev] = parseVerbs(ev.Verbs)
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

// batchDelay is how long the reader lets records gather after it has
// drained the buffer and written its lines out, before it waits for more.
// The kernel wakes the reader for a record that finds the buffer empty: a
// reader that drains each record as it comes is woken once per record, a
// wakeup and a write costing more than printing it. Pausing here bounds
// wakeups to one per batchDelay under load; a rare event is still printed
// the moment it comes, and the next one at most batchDelay later.
const batchDelay = 500 * time.Microsecond

// readEvents prints records until the reader is flushed and drained, or
// closed. The output is written whenever nothing more is pending.
func (p *printer) readEvents(rd eventReader) error {
	read := 0
	for {
		if read > 0 && !rd.pending() {
			if p.group != nil {
				p.buf = p.group.flush(p.buf, time.Now().Add(-TimelineQuiet), false)
			}
			if err := p.flush(); err != nil {
				return err
			}
			time.Sleep(batchDelay)
			read = 0
		}
		if p.group != nil {
			// Wake when the oldest open block goes quiet.
			rd.setDeadline(p.group.deadline())
		}
		rec, done, err := rd.next()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			read = 1 // the quiet blocks are printed at the top
			continue
		}
		if done || err != nil {
			if p.group != nil {
				p.buf = p.group.flush(p.buf, time.Time{}, true)
			}
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
func (p *printer) flush() error {
	if p.pcap != nil {
		if err := p.pcap.Flush(); err != nil {
			return err
		}
	}
	if len(p.buf) == 0 {
		return nil
	}
	_, err := p.w.Write(p.buf)
	p.buf = p.buf[:0]
	return err
}

func (p *printer) record(b []byte) error {
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
		return p.control(ev)
	}
	switch {
	case ev.Kind == codegen.EventCapture:
		if p.pcap == nil {
			return fmt.Errorf("capture() needs -w FILE")
		}
		return p.pcap.frame(b, p.where(ev, b))
	case ev.Kind == codegen.EventPrintf && p.json:
		p.scratch = p.printf(p.scratch[:0], ev, b)
		p.buf = append(p.buf, `{"data":`...)
		p.buf = appendJSONString(p.buf, p.scratch)
		p.buf = append(p.buf, `,"type":"printf"}`+"\n"...)
	case ev.Kind == codegen.EventPrintf:
		p.buf = p.printf(p.buf, ev, b)
	case ev.Kind == codegen.EventJoin:
		p.buf = p.join(p.buf, ev, b)
	case ev.Kind == codegen.EventCat:
		p.buf = p.cat(p.buf, ev, b)
	case p.group != nil && ev.Kind == codegen.EventPrint:
		p.group.add(p, ev, b)
	case p.json:
		p.buf = p.printJSON(p.buf, ev, b)
	default:
		p.buf = p.print(p.buf, ev, b)
	}
	if len(p.buf) >= flushAt {
		return p.flush()
	}
	return nil
}

// printf appends a printf record's text.
func (p *printer) printf(dst []byte, ev *codegen.Event, b []byte) []byte {
	i := 0
	for _, v := range p.verbs[ev] {
		dst = append(dst, v.text...)
		if v.conv == 0 || i >= len(ev.Args) {
			continue
		}
		a := ev.Args[i]
		i++
		raw := b[a.Offset : a.Offset+a.Size]
		switch v.conv {
		case 'T':
			dst = appendStrftime(dst, v.flags, p.boot.Add(time.Duration(binary.LittleEndian.Uint64(raw))))
		case 's':
			start := len(dst)
			dst = p.fmt.appendValue(dst, a.Type, raw)
			dst = v.pad(dst, start)
		case 'r':
			start := len(dst)
			dst = appendRaw(dst, raw, v.raw)
			dst = v.pad(dst, start)
		case 'p':
			start := len(dst)
			dst = strconv.AppendUint(append(dst, "0x"...), binary.LittleEndian.Uint64(raw), 16)
			dst = v.pad(dst, start)
		case 'c':
			if v.slow {
				dst = fmt.Appendf(dst, "%"+v.flags+"c", rune(raw[0]))
				break
			}
			start := len(dst)
			dst = append(dst, string(rune(raw[0]))...)
			dst = v.pad(dst, start)
		default:
			dst = v.appendInt(dst, binary.LittleEndian.Uint64(raw), v.conv == 'd' && a.Type.Signed)
		}
	}
	return dst
}

// where names the function or tracepoint a print record comes from.
func (p *printer) where(ev *codegen.Event, b []byte) string {
	fn := binary.LittleEndian.Uint64(b[codegen.PrintFunc:])
	if fn == 0 {
		return ev.Probe
	}
	name, ok := p.funcs[fn]
	if !ok {
		// Traced functions and __traceiter_ symbols are there from boot:
		// the reading discovery made serves (stacks, which may show
		// programs loaded since, read kallsyms anew).
		name = kernel.Kallsyms().Name(fn)
		p.funcs[fn] = name
	}
	return name
}

// print appends pwru's columns: time, CPU, skb address, function, then the
// values as name=value.
func (p *printer) print(dst []byte, ev *codegen.Event, b []byte) []byte {
	u := func(off int) uint64 { return binary.LittleEndian.Uint64(b[off:]) }
	dst = p.boot.Add(time.Duration(u(codegen.PrintTime))).AppendFormat(dst, "15:04:05.000000")
	dst = append(dst, ' ')
	dst = appendPadded(dst, strconv.AppendUint(p.scratch[:0], u(codegen.PrintCPU), 10), 3, false, ' ')
	dst = append(dst, " 0x"...)
	dst = appendPadded(dst, strconv.AppendUint(p.scratch[:0], u(codegen.PrintSkb), 16), 16, false, '0')
	dst = append(dst, ' ')
	return p.appendHop(dst, p.where(ev, b), ev, b)
}

// appendHop appends the function, padded, and the values as name=value:
// the end of a print line, and a hop of a timeline block.
func (p *printer) appendHop(dst []byte, where string, ev *codegen.Event, b []byte) []byte {
	start := len(dst)
	dst = append(dst, where...)
	dst = padRight(dst, start, 24)
	for _, a := range ev.Args {
		dst = append(dst, ' ')
		dst = append(dst, a.Name...)
		dst = append(dst, '=')
		dst = p.appendArg(dst, where, a, b[a.Offset:a.Offset+a.Size])
	}
	return append(dst, '\n')
}

// formatAddr renders an address value: 16 bytes, then the family (4 or 6).
func formatAddr(raw []byte) string { return string(appendAddr(nil, raw)) }

// appendAddr appends formatAddr's text.
func appendAddr(dst, raw []byte) []byte {
	switch raw[16] {
	case 4:
		return netip.AddrFrom4([4]byte(raw[:4])).AppendTo(dst)
	case 6:
		return netip.AddrFrom16([16]byte(raw[:16])).AppendTo(dst)
	}
	return append(dst, '-')
}

// printJSON appends print's record as one JSON object: the columns, and
// the values by name, numbers as numbers; keys in json.Marshal's order.
func (p *printer) printJSON(dst []byte, ev *codegen.Event, b []byte) []byte {
	u := func(off int) uint64 { return binary.LittleEndian.Uint64(b[off:]) }
	where := p.where(ev, b)
	dst = strconv.AppendUint(append(dst, `{"cpu":`...), u(codegen.PrintCPU), 10)
	dst = p.appendJSONData(append(dst, `,"data":`...), where, ev, b)
	dst = append(dst, `,"func":`...)
	dst = appendJSONString(dst, where)
	dst = strconv.AppendUint(append(dst, `,"skb":"0x`...), u(codegen.PrintSkb), 16)
	dst = append(dst, `","time":"`...)
	dst = p.boot.Add(time.Duration(u(codegen.PrintTime))).AppendFormat(dst, time.RFC3339Nano)
	return append(dst, `","type":"event"}`+"\n"...)
}

// appendJSONData appends a print record's values as one JSON object, by
// name in json.Marshal's order: an event's "data", a timeline hop's.
func (p *printer) appendJSONData(dst []byte, where string, ev *codegen.Event, b []byte) []byte {
	dst = append(dst, '{')
	for i, a := range p.jsonArgs[ev] {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, a.Name)
		dst = append(dst, ':')
		dst = p.appendJSONValue(dst, where, a, b[a.Offset:a.Offset+a.Size])
	}
	return append(dst, '}')
}

// appendJSONValue appends a value as JSON shows it: plain integers as
// numbers, stacks as arrays of frames, a mixed retval as its function
// returns it (appendJSONRet), the rest as strings of their text. where is
// the record's function.
func (p *printer) appendJSONValue(dst []byte, where string, a codegen.EventArg, raw []byte) []byte {
	t := a.Type
	switch {
	case t.Kind == types.Int && t.Fmt == types.FmtDec:
		if t.Signed {
			return strconv.AppendInt(dst, int64(binary.LittleEndian.Uint64(raw)), 10)
		}
		return strconv.AppendUint(dst, binary.LittleEndian.Uint64(raw), 10)
	case t.Kind == types.Int && t.Fmt == types.FmtRet:
		rc, ok := p.rets[where]
		return appendJSONRet(dst, rc, ok, raw)
	case t.Kind == types.Stack:
		b, _ := json.Marshal(p.fmt.jsonValue(t, raw))
		return append(dst, b...)
	case t.Kind == types.Tuple:
		return p.fmt.appendTupleJSON(dst, t, raw)
	}
	p.scratch = p.fmt.appendValue(p.scratch[:0], t, raw)
	return appendJSONString(dst, p.scratch)
}

// jsonLine marshals v as one line; map keys come out sorted.
func jsonLine(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"type": "error", "data": err.Error()})
	}
	return string(b) + "\n"
}
