package output

import (
	"encoding/binary"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/skbtrace/skbtrace/codegen"
)

// A graph block in JSON is one object a line, its calls nested as the
// text's lines are (keys in json.Marshal's order, as an event's):
//
//	{"calls":[{"calls":[{"calls":[],"data":{},"depth":1,"duration_ns":1234,
//	                     "func":"ip_rcv_core","retval":"0xffff888106e3b700"}],
//	           "data":{},"depth":0,"duration_ns":20100,"func":"ip_rcv","retval":0}],
//	 "cpu":0,"skb":"0xffff888106e3b700","time":"2026-11-23T14:00:00.123456789Z","type":"graph"}
//
// A call has the calls printed inside it (always an array), its depth
// (0 outermost), and its values other than retval, duration and skb in
// data, the entry's and the return's (the return's win on a name both
// have). Where its return was seen, duration_ns and retval (where the
// return printed one: a number, a pointer in hex as a string, void as
// null); a call whose return was not seen has neither.

// addJSON takes a record's values as JSON: retval's, duration, and the
// others as members, in json.Marshal's order; skb, the block's own key,
// not at all.
func (l *gLine) addJSON(p *Printer, ev *codegen.Event, b []byte) {
	for _, a := range p.jsonArgs[ev] {
		raw := b[a.Offset : a.Offset+a.Size]
		switch {
		case ev.Return && a.Name == "retval":
			l.ret = p.appendJSONValue(l.ret[:0], l.name, a, raw)
		case ev.Return && a.Name == "duration":
			l.dur, l.hasD = binary.LittleEndian.Uint64(raw), true
		case a.Name == "skb":
		default:
			start := len(l.args)
			l.args = p.appendJSONValue(l.args, l.name, a, raw)
			l.members = append(l.members, gMember{name: a.Name, start: start, end: len(l.args)})
		}
	}
}

// mergeJSON adds the values of a call's return line to its entry line's.
func (l *gLine) mergeJSON(r *gLine) {
	off := len(l.args)
	l.args = append(l.args, r.args...)
	for _, m := range r.members {
		l.members = append(l.members, gMember{name: m.name, start: m.start + off, end: m.end + off})
	}
}

// appendJSON appends the block as one JSON object and a newline: the
// lines' calls nested by their depth, an open line's inside holding the
// lines after it that are deeper, up to its close.
func (blk *gBlock) appendJSON(dst []byte, k graphKey, boot time.Time) []byte {
	dst = append(dst, `{"calls":[`...)
	var open []*gLine // the calls whose objects are begun, outermost first
	empty := true     // the innermost calls array has no element yet
	for _, l := range blk.lines {
		closed := false
		for len(open) > 0 && open[len(open)-1].depth >= l.depth && !closed {
			top := open[len(open)-1]
			open = open[:len(open)-1]
			if l.kind == gClose && top.depth == l.depth {
				dst, closed = top.appendJSONEnd(dst, l), true
			} else {
				dst = top.appendJSONEnd(dst, nil)
			}
			empty = false
		}
		if l.kind == gClose {
			continue
		}
		if !empty {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"calls":[`...)
		if l.kind == gOpen {
			open, empty = append(open, l), true
			continue
		}
		dst, empty = l.appendJSONEnd(dst, l), false
	}
	for i := len(open) - 1; i >= 0; i-- {
		dst = open[i].appendJSONEnd(dst, nil)
	}
	dst = strconv.AppendUint(append(dst, `],"cpu":`...), k.cpu, 10)
	if e := codegen.DecodeEdge(blk.edge); blk.pkt != 0 && e.Kind != codegen.EdgeOrigin && e.Kind != 0 {
		dst = appendEdgeJSON(dst, blk.parent, blk.edge)
	}
	if blk.frame {
		dst = append(dst, `,"frame":true`...)
	}
	if blk.pkt != 0 {
		dst = strconv.AppendUint(append(dst, `,"packet":"0x`...), blk.pkt, 16)
		dst = append(dst, '"')
	}
	dst = blk.pods.appendJSON(dst)
	dst = strconv.AppendUint(append(dst, `,"skb":"0x`...), k.skb, 16)
	if !boot.IsZero() {
		dst = append(dst, `","time":"`...)
		dst = boot.Add(time.Duration(blk.first)).AppendFormat(dst, time.RFC3339Nano)
	}
	return append(dst, `","type":"graph"}`+"\n"...)
}

// appendJSONEnd ends a call's object after its calls: its values, depth,
// and from ret, the line its return came on (nil: not seen), the duration
// and retval.
func (l *gLine) appendJSONEnd(dst []byte, ret *gLine) []byte {
	dst = append(dst, `],"data":{`...)
	// Stable: of the values of one name, the return's come last and win.
	slices.SortStableFunc(l.members, func(a, b gMember) int { return strings.Compare(a.name, b.name) })
	n := 0
	for i, m := range l.members {
		if i+1 < len(l.members) && l.members[i+1].name == m.name {
			continue
		}
		if n++; n > 1 {
			dst = append(dst, ',')
		}
		dst = append(appendJSONString(dst, m.name), ':')
		dst = append(dst, l.args[m.start:m.end]...)
	}
	dst = strconv.AppendInt(append(dst, `},"depth":`...), int64(l.depth), 10)
	if ret != nil && ret.hasD {
		dst = strconv.AppendUint(append(dst, `,"duration_ns":`...), ret.dur, 10)
	}
	dst = appendJSONString(append(dst, `,"func":`...), l.name)
	if ret != nil && len(ret.ret) > 0 {
		dst = append(append(dst, `,"retval":`...), ret.ret...)
	}
	return append(dst, '}')
}
