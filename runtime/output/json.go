package output

import (
	"encoding/binary"
	"io"
	"strconv"
	"time"

	"github.com/skbtrace/skbtrace/codegen"
)

// jsonFormat is -f json: one JSON object a line, keys in json.Marshal's
// order. print's records are {"cpu", "data", "func", "skb", "time",
// "type": "event"}, with "container", "namespace" and "pod" where the
// record's network namespace (or device, or process) is a pod's or a
// container's, printf's, cat's and join's lines bpftrace's {"data",
// "type": "printf"|"cat"|"join"}, maps {"type": "map"|"hist", "data":
// {"@name": ...}}.
type jsonFormat struct{ p *Printer }

// Record appends print's record as one JSON object: the columns, and the
// values by name, numbers as numbers.
func (f jsonFormat) Record(dst []byte, ev *codegen.Event, b []byte) []byte {
	p := f.p
	u := func(off int) uint64 { return binary.LittleEndian.Uint64(b[off:]) }
	where := p.where(ev, b)
	n, _ := p.eventName(ev, b)
	dst = strconv.AppendUint(append(dst, `{"cpu":`...), u(codegen.PrintCPU), 10)
	dst = appendJSONName(dst, n, "container")
	dst = p.appendJSONData(append(dst, `,"data":`...), where, ev, b)
	dst = append(dst, `,"func":`...)
	dst = appendJSONString(dst, where)
	dst = appendJSONName(dst, n, "namespace")
	if id, _, _ := recordPacket(ev, b); id != 0 {
		// A tracking script's: the skb's logical packet (packet.go).
		dst = strconv.AppendUint(append(dst, `,"packet":"0x`...), id, 16)
		dst = append(dst, '"')
	}
	dst = appendJSONName(dst, n, "pod")
	dst = strconv.AppendUint(append(dst, `,"skb":"0x`...), u(codegen.PrintSkb), 16)
	dst = append(dst, `","time":"`...)
	dst = p.boot.Add(time.Duration(u(codegen.PrintTime))).AppendFormat(dst, time.RFC3339Nano)
	return append(dst, `","type":"event"}`+"\n"...)
}

// lineTypes are the "type" of each kind of line.
var lineTypes = [...]string{LinePrintf: `,"type":"printf"}` + "\n", LineCat: `,"type":"cat"}` + "\n", LineJoin: `,"type":"join"}` + "\n", LineTime: `,"type":"time"}` + "\n"}

// Line appends {"data": text, "type": kind}.
func (jsonFormat) Line(dst []byte, kind LineKind, s []byte) []byte {
	dst = append(dst, `{"data":`...)
	dst = appendJSONString(dst, s)
	return append(dst, lineTypes[kind]...)
}

// Flush has no blocks to print.
func (jsonFormat) Flush(dst []byte, _ time.Time, _ bool) []byte { return dst }

// Deadline is never: nothing waits.
func (jsonFormat) Deadline() time.Time { return time.Time{} }

// Maps prints every map that holds data, one object each.
func (f jsonFormat) Maps(w io.Writer, maps []MapData) error { return printMaps(f.p.fmt, w, maps, true) }

// Map prints one map as one object.
func (f jsonFormat) Map(w io.Writer, m MapData, view View) error {
	_, err := printMap(f.p.fmt, w, m, true, view, true)
	return err
}
