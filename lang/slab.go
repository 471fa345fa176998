package lang

// slab hands out values from blocks that are kept when it is reset, so
// that a tree built, used and dropped again and again (descent's, once
// per range) costs no allocation after the first.
type slab[T any] struct {
	blocks [][]T
	b, i   int // the next value is blocks[b][i]
}

// slabBlock is the size of the largest blocks; the first are smaller,
// so that a one-liner does not pay for a script's blocks.
const slabBlock = 64

// new returns a pointer to a copy of v, valid until the next reset.
func (s *slab[T]) new(v T) *T {
	if s.b == len(s.blocks) {
		size := slabBlock
		if n := len(s.blocks); n < 3 {
			size >>= 3 - n // 8, 16, 32, then 64
		}
		s.blocks = append(s.blocks, make([]T, size))
	}
	blk := s.blocks[s.b]
	p := &blk[s.i]
	*p = v
	if s.i++; s.i == len(blk) {
		s.b, s.i = s.b+1, 0
	}
	return p
}

// reset makes every value free again. The old values stay in the blocks
// until overwritten.
func (s *slab[T]) reset() { s.b, s.i = 0, 0 }
