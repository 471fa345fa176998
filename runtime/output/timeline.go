package output

import (
	"encoding/binary"
	"slices"
	"strconv"
	"time"

	"github.com/skbtrace/skbtrace/codegen"
)

// freeFuncs end an skb's life: a hop here closes its block.
var freeFuncs = []string{"kfree_skb", "consume_skb", "kfree_skbmem", "__kfree_skb", "sk_skb_reason_drop", "kfree_skb_reason", "skb_release_all", "napi_skb_free_stolen_head"}

// timeline groups print records per packet, by skb address: one block each,
// its hops in order with the time since the first, printed when the skb is
// freed (what comes in the same batch of records, such as the drop's
// reason from another probe on kfree_skb, still joins it) or after
// TimelineQuiet without a hop. An XDP program's hops, before there is an
// skb, are a frame's block, by its xdp_buff, ended by the program's
// verdict. A tracking script's records carry their logical packet
// (packet.go): its block gathers every skb of the packet (clones, copies,
// GSO segments, IP fragments, the reassembled datagram), each skb's
// first hop after a line that says how it was made, its hops with its
// address; it ends when all of them are freed.
//
// With -f json a block is one JSON object (timelinejson.go).
type timeline struct {
	open openBlocks[uint64, *tlBlock]
	json bool
	// boot is the wall-clock time of monotonic zero.
	boot time.Time
}

type tlBlock struct {
	first uint64    // monotonic ns of the first hop
	seen  time.Time // when the last hop was read
	// lines are the block's text; with JSON, its hops' objects, each
	// after a comma.
	lines []byte
	// drop is, with JSON, the object of the last hop with a reason.
	drop   []byte
	closed bool
	// frame: the block is an XDP frame's, keyed by its xdp_buff.
	frame bool
	// head is where the text header's line ends in lines; pods the pods
	// and containers its hops were in, which the header names.
	head int
	pods trail
	// pkt is the block's logical packet, where its records carry one
	// (a tracking script's): the block is the packet's, not one skb's.
	pkt *pktState
	// The hop being added, for its JSON: its skb, and the edge it shows.
	hopSkb, hopParent, hopEdge uint64
	hopNew                     bool
}

func newTimeline(boot time.Time, json bool) *timeline { return &timeline{boot: boot, json: json} }

// add appends a print record as a hop of its skb's block.
func (tl *timeline) add(p *Printer, ev *codegen.Event, b []byte) {
	u := func(off int) uint64 { return binary.LittleEndian.Uint64(b[off:]) }
	skb, now := u(codegen.PrintSkb), u(codegen.PrintTime)
	name := p.where(ev, b)
	free := slices.Contains(freeFuncs, name)
	// A freed skb's block takes what else frees it (kfree_skb's reason);
	// another hop at its address is a new packet's, as an XDP program's
	// entry is a new frame's.
	fresh := ev.Frame && !ev.Return || !ev.Frame && !free
	// A record with a logical packet joins the packet's block: its skbs'
	// ids (the CPU's number plus one above bit 48) are never an address.
	id, parent, edge := recordPacket(ev, b)
	key := skb
	if id != 0 {
		key = id
	}
	blk := tl.open.get(key, fresh, func() *tlBlock {
		blk := &tlBlock{first: now, frame: ev.Frame}
		if id != 0 {
			blk.pkt = newPktState(id, skb)
		}
		if tl.json {
			return blk
		}
		if ev.Frame {
			blk.lines = append(blk.lines, "frame 0x"...)
		} else {
			blk.lines = append(blk.lines, "skb 0x"...)
		}
		blk.lines = strconv.AppendUint(blk.lines, skb, 16)
		blk.lines = append(blk.lines, " at "...)
		blk.lines = p.boot.Add(time.Duration(now)).AppendFormat(blk.lines, "15:04:05.000000")
		if id != 0 {
			blk.lines = strconv.AppendUint(append(blk.lines, " packet 0x"...), id, 16)
		}
		blk.head = len(blk.lines)
		blk.lines = append(blk.lines, '\n')
		return blk
	})
	blk.seen = time.Now()
	blk.pods.add(p, ev, b)
	blk.hopSkb, blk.hopParent, blk.hopEdge, blk.hopNew = skb, parent, edge, false
	if blk.pkt != nil {
		blk.hopNew = blk.pkt.hop(skb, parent, edge, free)
	}
	if tl.json {
		blk.addJSON(p, name, ev, b)
	} else {
		stamp := func(d []byte) []byte {
			d = append(d, "  +"...)
			d = appendPadded(d, strconv.AppendFloat(p.scratch[:0], float64(now-blk.first)/1e3, 'f', 3, 64), 10, false, ' ')
			return append(d, "us  "...)
		}
		d := blk.lines
		if blk.hopNew {
			// The skb's edge, then its hops, each with its address.
			d = append(appendEdgeText(stamp(d), skb, parent, edge), '\n')
		}
		d = stamp(d)
		if blk.pkt != nil && skb != blk.pkt.first {
			d = append(strconv.AppendUint(append(d, "0x"...), skb, 16), ' ')
		}
		blk.lines = p.appendHop(d, name, ev, b)
	}
	switch {
	case blk.pkt != nil:
		// A packet's block ends with the last of its skbs, once every
		// skb its splits made has been seen.
		blk.closed = blk.pkt.closed
	case free || ev.Frame && ev.Return:
		// An XDP program's verdict ends its frame: dropped, sent, or
		// passed on as an skb (another block).
		blk.closed = true
	}
}

// flush appends to dst the blocks that are done: freed, quiet since
// before quietSince, or all of them.
func (tl *timeline) flush(dst []byte, quietSince time.Time, all bool) []byte {
	return tl.flushEach(dst, quietSince, all, nil)
}

// flushEach is flush, done called after each block.
func (tl *timeline) flushEach(dst []byte, quietSince time.Time, all bool, done func([]byte) []byte) []byte {
	return tl.open.flush(dst, quietSince, all, done, func(dst []byte, skb uint64, blk *tlBlock) []byte {
		if tl.json {
			if blk.pkt != nil {
				// Keyed by its packet: named by its first skb.
				skb = blk.pkt.first
			}
			return blk.appendJSON(dst, skb, tl.boot)
		}
		dst = blk.pods.appendText(append(dst, blk.lines[:blk.head]...))
		return append(append(dst, blk.lines[blk.head:]...), '\n')
	})
}

// deadline is when the oldest open block goes quiet, zero without one.
func (tl *timeline) deadline() time.Time { return tl.open.deadline() }

func (blk *tlBlock) lastSeen() time.Time { return blk.seen }

// complete: the skb was freed.
func (blk *tlBlock) complete() bool { return blk.closed }
