package output

import (
	"encoding/binary"
	"strconv"
	"time"

	"github.com/skbtrace/skbtrace/codegen"
)

// graph nests print records per skb and CPU, as ftrace's and ipftrace2's
// function_graph do: an skb: probe's record opens a call, an skbret:
// probe's closes it with its return value and time. One block per skb
// and CPU, printed when its outermost call returns, after TimelineQuiet
// without a record, or at the end:
//
//	skb 0xffff888106e3b700 on CPU 0 at 12:00:00.123456
//	               | ip_rcv() {
//	      1.234 us |   ip_rcv_core() = 0xffff888106e3b700
//	     20.100 us | } ip_rcv = 0
//
// A return whose entry was not printed (it came before the packet matched)
// opens its call above everything before it, when nothing is open. The
// values of a record follow its function as name=value: retval as
// " = VALUE", duration in the time column; skb, the block's, not at all.
// With -f json a block is one JSON object (graphjson.go).
type graph struct {
	open openBlocks[graphKey, *gBlock]
	json bool
	// boot is the wall-clock time of monotonic zero.
	boot time.Time
}

type graphKey struct{ skb, cpu uint64 }

type gBlock struct {
	first uint64 // monotonic ns of the first record
	seen  time.Time
	lines []*gLine
	stack []int // the open calls, as indexes of their lines
	json  bool
	// frame: an XDP frame's block, keyed by its xdp_buff: a program's
	// entry after its return is the next frame's.
	frame bool
	// pods are the pods and containers its records were in.
	pods trail
	// pkt is the skb's logical packet (a tracking script's), parent and
	// edge how the skb joined it, as its first record has them.
	pkt, parent, edge uint64
}

// gLine is a line of a block: an open call, a leaf (a call that returned
// with no call inside it printed), or a call's close.
type gLine struct {
	depth int
	name  string
	kind  gKind
	dur   uint64 // ns; leaf and close
	hasD  bool
	// ret is " = VALUE" (leaf, close); args the other values as
	// " name=value". With JSON, ret is the value's JSON, args the
	// values' JSON one after another, members where each is.
	ret, args []byte
	members   []gMember
}

// gMember is a value of a line in JSON: its name, and where its JSON is in
// the line's args.
type gMember struct {
	name       string
	start, end int
}

type gKind uint8

const (
	gOpen gKind = iota
	gLeaf
	gClose
)

func newGraph(boot time.Time, json bool) *graph {
	return &graph{boot: boot, json: json}
}

// add puts a print record into its skb and CPU's block.
func (gr *graph) add(p *Printer, ev *codegen.Event, b []byte) {
	u := func(off int) uint64 { return binary.LittleEndian.Uint64(b[off:]) }
	k := graphKey{u(codegen.PrintSkb), u(codegen.PrintCPU)}
	blk := gr.open.get(k, ev.Frame && !ev.Return, func() *gBlock { return &gBlock{first: u(codegen.PrintTime), json: gr.json, frame: ev.Frame} })
	blk.seen = time.Now()
	blk.pods.add(p, ev, b)
	if blk.pkt == 0 {
		blk.pkt, blk.parent, blk.edge = recordPacket(ev, b)
	}
	name := p.where(ev, b)
	l := &gLine{name: name}
	if gr.json {
		l.addJSON(p, ev, b)
	} else {
		l.addText(p, ev, b)
	}
	if !ev.Return {
		l.depth, l.kind = len(blk.stack), gOpen
		blk.stack = append(blk.stack, len(blk.lines))
		blk.lines = append(blk.lines, l)
		return
	}
	blk.ret(l)
}

// addText takes a record's values as the text shows them: retval as
// " = VALUE", duration in the time column, the others as " name=value",
// skb (the block's own key) not at all.
func (l *gLine) addText(p *Printer, ev *codegen.Event, b []byte) {
	for _, a := range ev.Args {
		raw := b[a.Offset : a.Offset+a.Size]
		switch {
		case ev.Return && a.Name == "retval":
			l.ret = p.appendArg(append(l.ret, " = "...), l.name, a, raw)
		case ev.Return && a.Name == "duration":
			l.dur, l.hasD = binary.LittleEndian.Uint64(raw), true
		case a.Name == "skb":
		default:
			l.args = append(append(append(l.args, ' '), a.Name...), '=')
			l.args = p.appendArg(l.args, l.name, a, raw)
		}
	}
}

// ret closes the innermost open call of the function: calls opened inside
// it whose returns were not seen stay open lines.
func (blk *gBlock) ret(l *gLine) {
	for i := len(blk.stack) - 1; i >= 0; i-- {
		open := blk.lines[blk.stack[i]]
		if open.name != l.name {
			continue
		}
		at := blk.stack[i]
		blk.stack = blk.stack[:i]
		if at == len(blk.lines)-1 {
			// Nothing inside: one line.
			open.kind, open.dur, open.hasD, open.ret = gLeaf, l.dur, l.hasD, l.ret
			if blk.json {
				open.mergeJSON(l)
			} else {
				open.args = append(open.args, l.args...)
			}
			return
		}
		if blk.json {
			// The call's values are its entry's and its return's.
			open.mergeJSON(l)
		}
		l.depth, l.kind = open.depth, gClose
		blk.lines = append(blk.lines, l)
		return
	}
	if len(blk.stack) == 0 && len(blk.lines) > 0 {
		// Its entry came before the first line: it holds them all.
		for _, x := range blk.lines {
			x.depth++
		}
		open := &gLine{name: l.name, kind: gOpen}
		if blk.json {
			open.mergeJSON(l)
		}
		blk.lines = append([]*gLine{open}, blk.lines...)
		l.kind = gClose
		blk.lines = append(blk.lines, l)
		return
	}
	l.depth, l.kind = len(blk.stack), gLeaf
	blk.lines = append(blk.lines, l)
}

// flush appends the blocks that are done: their outermost call returned,
// quiet since before quietSince, or all of them.
func (gr *graph) flush(dst []byte, quietSince time.Time, all bool) []byte {
	return gr.flushEach(dst, quietSince, all, nil)
}

// flushEach is flush, done called after each block.
func (gr *graph) flushEach(dst []byte, quietSince time.Time, all bool, done func([]byte) []byte) []byte {
	return gr.open.flush(dst, quietSince, all, done, func(dst []byte, k graphKey, blk *gBlock) []byte {
		if gr.json {
			return blk.appendJSON(dst, k, gr.boot)
		}
		return blk.appendTo(dst, k, gr.boot)
	})
}

// deadline is when the oldest open block goes quiet, zero without one.
func (gr *graph) deadline() time.Time { return gr.open.deadline() }

func (blk *gBlock) lastSeen() time.Time { return blk.seen }

// complete: the outermost call returned.
func (blk *gBlock) complete() bool { return len(blk.stack) == 0 }

// graphDurWidth is the width of the duration column.
const graphDurWidth = 14

// appendTo appends a block: its header, then a line per call, the time
// each took in a column on the left.
func (blk *gBlock) appendTo(dst []byte, k graphKey, boot time.Time) []byte {
	if blk.frame {
		dst = append(dst, "frame 0x"...)
	} else {
		dst = append(dst, "skb 0x"...)
	}
	dst = strconv.AppendUint(dst, k.skb, 16)
	dst = append(dst, " on CPU "...)
	dst = strconv.AppendUint(dst, k.cpu, 10)
	if !boot.IsZero() {
		dst = append(dst, " at "...)
		dst = boot.Add(time.Duration(blk.first)).AppendFormat(dst, "15:04:05.000000")
	}
	if blk.pkt != 0 {
		dst = strconv.AppendUint(append(dst, " packet 0x"...), blk.pkt, 16)
		if e := codegen.DecodeEdge(blk.edge); e.Kind != codegen.EdgeOrigin && e.Kind != 0 {
			dst = append(appendEdgeText(append(dst, " ("...), k.skb, blk.parent, blk.edge), ')')
		}
	}
	dst = append(blk.pods.appendText(dst), '\n')
	for _, l := range blk.lines {
		start := len(dst)
		if l.hasD {
			dst = strconv.AppendFloat(dst, float64(l.dur)/1e3, 'f', 3, 64)
			dst = append(dst, " us"...)
		}
		dst = padLeft(dst, start, graphDurWidth, ' ')
		dst = append(dst, " | "...)
		for range l.depth {
			dst = append(dst, "  "...)
		}
		switch l.kind {
		case gOpen:
			dst = append(append(dst, l.name...), "() {"...)
		case gLeaf:
			dst = append(append(append(dst, l.name...), "()"...), l.ret...)
		case gClose:
			dst = append(append(append(dst, "} "...), l.name...), l.ret...)
		}
		dst = append(append(dst, l.args...), '\n')
	}
	return append(dst, '\n')
}
