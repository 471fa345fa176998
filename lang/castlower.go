package lang

import (
	"strconv"
	"strings"
)

// cast lowers a cast: `(struct sock *)x`, `(uint32)x`, bpftrace's
// `(bool)x` (the checker: true where x is not 0 or "") and array casts `(int8[8])x`, `(uint8[])x`
// (Array set, Len 0 where the size is left to the operand's).
func (l *lowerer) cast(c *gCast, ty string) Expr {
	sp := l.span(c.Pos, c.EndPos)
	x := l.unary(c.X)
	// The kernel's fixed-width names (uint64_t) are bpftrace's (uint64).
	ty = strings.TrimSuffix(ty, "_t")
	e := &CastExpr{At: sp, Type: ty, Ptr: len(c.Stars), X: x}
	if c.Open != "" {
		e.Array = true
		if c.Len != "" {
			n, err := strconv.ParseUint(c.Len, 0, 16)
			if err != nil || n == 0 {
				l.diags.Add(sp, "an array cast is (TYPE[N])x with N from 1 to 65535, or (TYPE[])x", "invalid array length %s", c.Len)
			}
			e.Len = int(n)
		}
	}
	return e
}
