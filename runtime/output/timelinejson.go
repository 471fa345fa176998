package output

import (
	"encoding/binary"
	"strconv"
	"time"

	"github.com/skbtrace/skbtrace/codegen"
)

// A timeline block in JSON is one object a line, what the text block shows
// (keys in json.Marshal's order, as an event's):
//
//	{"drop":{"func":"kfree_skb","location":"__udp4_lib_rcv+0x4bc","reason":"NO_SOCKET"},
//	 "hops":[{"cpu":0,"data":{"dev":"v1","len":43,"netns":4026532247},"delta_ns":0,
//	          "func":"net_dev_queue","time":"2026-11-23T14:00:00.123456789Z"}, ...],
//	 "skb":"0xffff8881e2200a00","time":"2026-11-23T14:00:00.123456789Z","type":"timeline"}
//
// Each hop is an event without its skb (the block's) and type, with the
// time since the first hop in ns. drop, there when a hop has a value named
// reason (kfree_skb's tracepoint, a drop function's skb: probe), is the
// last such hop's function, reason, and location (a value named location
// or ksym(location)), as jq finds them: select(.drop).drop.reason. An XDP
// frame's block (its skb the frame's xdp_buff) has "frame":true. "pods"
// are the pods and containers its hops were in, in order, where known.
// A tracking script's block is a logical packet's (packet.go): "packet"
// is its id, "skb" its first skb, each hop names its "skb", and the first
// hop of an skb the packet was split into has its "edge" (kind: clone,
// copy, segment, fragment; index, count, parent), as does the hop where
// it shows reassembled.

// addJSON appends a hop's object to the block, and takes it as the drop
// where it has a reason.
func (blk *tlBlock) addJSON(p *Printer, where string, ev *codegen.Event, b []byte) {
	u := func(off int) uint64 { return binary.LittleEndian.Uint64(b[off:]) }
	d := blk.lines
	if len(d) > 0 {
		d = append(d, ',')
	}
	d = strconv.AppendUint(append(d, `{"cpu":`...), u(codegen.PrintCPU), 10)
	d = p.appendJSONData(append(d, `,"data":`...), where, ev, b)
	d = strconv.AppendUint(append(d, `,"delta_ns":`...), u(codegen.PrintTime)-blk.first, 10)
	if blk.hopNew {
		d = appendEdgeJSON(d, blk.hopParent, blk.hopEdge)
	}
	d = appendJSONString(append(d, `,"func":`...), where)
	if blk.pkt != nil {
		// A packet's block has several skbs: each hop names its own.
		d = strconv.AppendUint(append(d, `,"skb":"0x`...), blk.hopSkb, 16)
		d = append(d, '"')
	}
	d = append(d, `,"time":"`...)
	d = p.boot.Add(time.Duration(u(codegen.PrintTime))).AppendFormat(d, time.RFC3339Nano)
	blk.lines = append(d, `"}`...)

	var reason, location *codegen.EventArg
	for i, a := range p.jsonArgs[ev] {
		switch a.Name {
		case "reason":
			reason = &p.jsonArgs[ev][i]
		case "location", "ksym(location)":
			location = &p.jsonArgs[ev][i]
		}
	}
	if reason == nil {
		return
	}
	d = appendJSONString(append(blk.drop[:0], `{"func":`...), where)
	if location != nil {
		d = p.appendJSONValue(append(d, `,"location":`...), where, *location, b[location.Offset:location.Offset+location.Size])
	}
	d = p.appendJSONValue(append(d, `,"reason":`...), where, *reason, b[reason.Offset:reason.Offset+reason.Size])
	blk.drop = append(d, '}')
}

// appendJSON appends the block as one JSON object and a newline.
func (blk *tlBlock) appendJSON(dst []byte, skb uint64, boot time.Time) []byte {
	dst = append(dst, '{')
	if len(blk.drop) > 0 {
		dst = append(append(append(dst, `"drop":`...), blk.drop...), ',')
	}
	if blk.frame {
		dst = append(dst, `"frame":true,`...)
	}
	dst = append(append(append(dst, `"hops":[`...), blk.lines...), ']')
	if blk.pkt != nil {
		dst = strconv.AppendUint(append(dst, `,"packet":"0x`...), blk.pkt.id, 16)
		dst = append(dst, '"')
	}
	dst = blk.pods.appendJSON(dst)
	dst = strconv.AppendUint(append(dst, `,"skb":"0x`...), skb, 16)
	dst = append(dst, `","time":"`...)
	dst = boot.Add(time.Duration(blk.first)).AppendFormat(dst, time.RFC3339Nano)
	return append(dst, `","type":"timeline"}`+"\n"...)
}
