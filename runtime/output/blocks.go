package output

import "time"

// block is one group of a grouper's lines: when its last record came, and
// whether it is complete (printed at the next flush, quiet or not).
type block interface {
	lastSeen() time.Time
	complete() bool
}

// openBlocks are a grouper's blocks not yet printed, by key, oldest first:
// what the timeline (per skb) and the graph (per skb and CPU) share. A
// record that starts a new block where its key's is complete (an XDP
// frame's entry: its xdp_buff is used again for the next frame, before
// the blocks are printed) leaves that one in line to be printed.
type openBlocks[K comparable, B interface {
	block
	comparable
}] struct {
	byKey map[K]B
	order []keyed[K, B]
}

type keyed[K comparable, B any] struct {
	k   K
	blk B
}

// get returns k's block, opening it with open when there is none, or,
// with fresh, when it is complete.
func (o *openBlocks[K, B]) get(k K, fresh bool, open func() B) B {
	blk, ok := o.byKey[k]
	if !ok || fresh && blk.complete() {
		if o.byKey == nil {
			o.byKey = map[K]B{}
		}
		blk = open()
		o.byKey[k] = blk
		o.order = append(o.order, keyed[K, B]{k, blk})
	}
	return blk
}

// flush appends with write the blocks that are done: complete, quiet since
// before quietSince, or all of them; they are forgotten. After each, done
// (where not nil) may write out what was appended: a rotation between two
// blocks.
func (o *openBlocks[K, B]) flush(dst []byte, quietSince time.Time, all bool, done func([]byte) []byte, write func([]byte, K, B) []byte) []byte {
	keep := o.order[:0]
	for _, e := range o.order {
		if all || e.blk.complete() || e.blk.lastSeen().Before(quietSince) {
			dst = write(dst, e.k, e.blk)
			if done != nil {
				dst = done(dst)
			}
			if o.byKey[e.k] == e.blk {
				delete(o.byKey, e.k)
			}
			continue
		}
		keep = append(keep, e)
	}
	clear(o.order[len(keep):])
	o.order = keep
	return dst
}

// deadline is when the oldest open block goes quiet, zero without one.
func (o *openBlocks[K, B]) deadline() time.Time {
	var d time.Time
	for _, e := range o.order {
		if t := e.blk.lastSeen().Add(TimelineQuiet); d.IsZero() || t.Before(d) {
			d = t
		}
	}
	return d
}
