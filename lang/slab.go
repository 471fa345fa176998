package lang

// slab hands out values from blocks that are kept when it is reset, so
// that a tree built, used and dropped again and again (descent's, once
// per range) costs no allocation after the first.
type slab[T any] struct {
	blocks [][]T
	b, i   int // the next value is blocks[b][i]
}

// slabBlock is how many values a block holds.
const slabBlock = 64

// new returns a pointer to a copy of v, valid until the next reset.
func (s *slab[T]) new(v T) *T {
	if s.b == len(s.blocks) {
		s.blocks = append(s.blocks, make([]T, slabBlock))
	}
	p := &s.blocks[s.b][s.i]
	*p = v
	if s.i++; s.i == slabBlock {
		s.b, s.i = s.b+1, 0
	}
	return p
}

// reset makes every value free again. The old values stay in the blocks
// until overwritten.
func (s *slab[T]) reset() { s.b, s.i = 0, 0 }
