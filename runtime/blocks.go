package runtime

import "time"

// block is one group of a grouper's lines: when its last record came, and
// whether it is complete (printed at the next flush, quiet or not).
type block interface {
	lastSeen() time.Time
	complete() bool
}

// openBlocks are a grouper's blocks not yet printed, by key, oldest first:
// what the timeline (per skb) and the graph (per skb and CPU) share.
type openBlocks[K comparable, B block] struct {
	byKey map[K]B
	order []K
}

// get returns k's block, opening it with open when there is none.
func (o *openBlocks[K, B]) get(k K, open func() B) B {
	blk, ok := o.byKey[k]
	if !ok {
		if o.byKey == nil {
			o.byKey = map[K]B{}
		}
		blk = open()
		o.byKey[k] = blk
		o.order = append(o.order, k)
	}
	return blk
}

// flush appends with write the blocks that are done: complete, quiet since
// before quietSince, or all of them; they are forgotten.
func (o *openBlocks[K, B]) flush(dst []byte, quietSince time.Time, all bool, write func([]byte, K, B) []byte) []byte {
	keep := o.order[:0]
	for _, k := range o.order {
		blk := o.byKey[k]
		if all || blk.complete() || blk.lastSeen().Before(quietSince) {
			dst = write(dst, k, blk)
			delete(o.byKey, k)
			continue
		}
		keep = append(keep, k)
	}
	o.order = keep
	return dst
}

// deadline is when the oldest open block goes quiet, zero without one.
func (o *openBlocks[K, B]) deadline() time.Time {
	var d time.Time
	for _, k := range o.order {
		if t := o.byKey[k].lastSeen().Add(TimelineQuiet); d.IsZero() || t.Before(d) {
			d = t
		}
	}
	return d
}
