package runtime

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"time"

	"github.com/skbtrace/skbtrace/codegen"
)

// printer decodes ring buffer records and writes them out.
type printer struct {
	w      io.Writer
	events []*codegen.Event
	fmt    *formatter
	json   bool
	// control acts on exit, print(@m), clear(@m) and zero(@m) records.
	control func(ev *codegen.Event) error
	// boot is the wall-clock time of monotonic zero, for print's timestamps.
	boot time.Time
}

func newPrinter(w io.Writer, events []*codegen.Event, f *formatter, json bool) *printer {
	return &printer{w: w, events: events, fmt: f, boot: f.boot, json: json}
}

// readEvents prints records until the reader is flushed and drained, or closed.
func (p *printer) readEvents(rd eventReader) error {
	for {
		rec, done, err := rd.next()
		if done || err != nil {
			return err
		}
		if err := p.record(rec); err != nil {
			return err
		}
	}
}

func (p *printer) record(b []byte) error {
	if len(b) < 8 {
		return fmt.Errorf("short record of %d bytes", len(b))
	}
	id := binary.LittleEndian.Uint64(b)
	if id >= uint64(len(p.events)) || len(b) < p.events[id].Size {
		return fmt.Errorf("record with unknown id %d", id)
	}
	ev := p.events[id]
	switch ev.Kind {
	case codegen.EventExit, codegen.EventPrintMap, codegen.EventClearMap, codegen.EventZeroMap:
		return p.control(ev)
	}
	var line string
	switch {
	case ev.Kind == codegen.EventPrintf && p.json:
		line = jsonLine(map[string]any{"type": "printf", "data": p.printf(ev, b)})
	case ev.Kind == codegen.EventPrintf:
		line = p.printf(ev, b)
	case p.json:
		line = p.printJSON(ev, b)
	default:
		line = p.print(ev, b)
	}
	_, err := io.WriteString(p.w, line)
	return err
}

// value formats one argument of a record, as %s shows it.
func (p *printer) value(a codegen.EventArg, b []byte) string {
	return p.fmt.value(a.Type, b[a.Offset:a.Offset+a.Size])
}

func (p *printer) printf(ev *codegen.Event, b []byte) string {
	var out strings.Builder
	i := 0
	for _, v := range ev.Verbs {
		out.WriteString(v.Text)
		if v.Conv == 0 || i >= len(ev.Args) {
			continue
		}
		a := ev.Args[i]
		i++
		switch v.Conv {
		case 's':
			fmt.Fprintf(&out, "%"+v.Flags+"s", p.value(a, b))
		case 'p':
			fmt.Fprintf(&out, "%"+v.Flags+"s", fmt.Sprintf("0x%x", binary.LittleEndian.Uint64(b[a.Offset:])))
		case 'c':
			fmt.Fprintf(&out, "%"+v.Flags+"c", rune(b[a.Offset]))
		default:
			n := binary.LittleEndian.Uint64(b[a.Offset:])
			conv := string(v.Conv)
			if conv == "u" {
				conv = "d"
			}
			if v.Conv == 'd' && a.Type.Signed {
				fmt.Fprintf(&out, "%"+v.Flags+conv, int64(n))
			} else {
				fmt.Fprintf(&out, "%"+v.Flags+conv, n)
			}
		}
	}
	return out.String()
}

// print formats pwru's columns: time, CPU, skb address, function, then the
// values as name=value.
func (p *printer) print(ev *codegen.Event, b []byte) string {
	u := func(off int) uint64 { return binary.LittleEndian.Uint64(b[off:]) }
	when := p.boot.Add(time.Duration(u(codegen.PrintTime))).Format("15:04:05.000000")
	where := ev.Probe
	if fn := u(codegen.PrintFunc); fn != 0 {
		where = p.fmt.ksyms.name(fn)
	}
	var out strings.Builder
	fmt.Fprintf(&out, "%s %3d 0x%016x %-24s", when, u(codegen.PrintCPU), u(codegen.PrintSkb), where)
	for _, a := range ev.Args {
		fmt.Fprintf(&out, " %s=%s", a.Name, p.value(a, b))
	}
	out.WriteByte('\n')
	return out.String()
}

// formatAddr renders an address value: 16 bytes, then the family (4 or 6).
func formatAddr(raw []byte) string {
	switch raw[16] {
	case 4:
		return netip.AddrFrom4([4]byte(raw[:4])).String()
	case 6:
		return netip.AddrFrom16([16]byte(raw[:16])).String()
	}
	return "-"
}

// printJSON is print's record as one JSON object: the columns, and the
// values by name, numbers as numbers.
func (p *printer) printJSON(ev *codegen.Event, b []byte) string {
	u := func(off int) uint64 { return binary.LittleEndian.Uint64(b[off:]) }
	where := ev.Probe
	if fn := u(codegen.PrintFunc); fn != 0 {
		where = p.fmt.ksyms.name(fn)
	}
	values := map[string]any{}
	for _, a := range ev.Args {
		values[a.Name] = p.fmt.jsonValue(a.Type, b[a.Offset:a.Offset+a.Size])
	}
	return jsonLine(map[string]any{
		"type": "event",
		"time": p.boot.Add(time.Duration(u(codegen.PrintTime))).Format(time.RFC3339Nano),
		"cpu":  u(codegen.PrintCPU), "skb": fmt.Sprintf("0x%x", u(codegen.PrintSkb)), "func": where,
		"data": values,
	})
}

// jsonLine marshals v as one line; map keys come out sorted.
func jsonLine(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"type": "error", "data": err.Error()})
	}
	return string(b) + "\n"
}
