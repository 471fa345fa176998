package output

import (
	"fmt"
	"strconv"

	"github.com/skbtrace/skbtrace/stdlib"
)

// bpftrace 0.26's printf beyond C's integers (the language side is
// stdlib.Verb's Length and its conversions): %hhx and %hx truncate the
// value to 8 and 16 bits as C does, %hhd and %hd then read it signed;
// %g, %e and %f print the integer as a floating-point number.

// truncate cuts an integer to the verb's length modifier: the low 8 bits
// for hh, 16 for h, sign-extended where the conversion is %d.
func (v *verbFmt) truncate(n uint64) uint64 {
	if v.bits == 0 {
		return n
	}
	shift := 64 - v.bits
	if v.conv == 'd' {
		return uint64(int64(n<<shift) >> shift)
	}
	return n << shift >> shift
}

// appendFloat appends %g, %e or %f of an integer.
func (v *verbFmt) appendFloat(dst []byte, n uint64, signed bool) []byte {
	f := float64(n)
	if signed {
		f = float64(int64(n))
	}
	if v.flags == "" {
		return strconv.AppendFloat(dst, f, v.conv|0x20, -1, 64)
	}
	return fmt.Appendf(dst, "%"+v.flags+string(v.conv), f)
}

// cIntBits is the width bpftrace's printf gives an integer verb, as C's:
// %d, %i, %u, %x, %X, %o without a length modifier print an int (32
// bits: %d of 5000000000 is 705032704), l and ll 64 bits, h and hh 16
// and 8.
func cIntBits(v stdlib.Verb) int {
	if v.Length != "" {
		return v.Bits()
	}
	switch v.Conv {
	case 'd', 'i', 'u', 'x', 'X', 'o':
		return 32
	}
	return 0
}
