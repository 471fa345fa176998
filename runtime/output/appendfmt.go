package output

import (
	"bytes"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/skbtrace/skbtrace/stdlib"
)

// verbFmt is one printf verb, its flags parsed once: the event path pads
// and converts without fmt. Flags other than '-', '0' and a width (C's
// '+', ' ', '#' and a precision) are left to fmt, as before.
type verbFmt struct {
	text  string
	conv  byte
	raw   byte // %r's variant: 0, 'x' or 'h'
	flags string
	width int
	left  bool
	zero  bool
	// slow says fmt formats this verb: its flags are not just -, 0, width.
	slow bool
	// bits is the width hh and h truncate an integer to (printflen.go).
	bits int
}

func parseVerbs(vs []stdlib.Verb, cInts bool) []verbFmt {
	out := make([]verbFmt, len(vs))
	for i, v := range vs {
		f := verbFmt{text: v.Text, conv: v.Conv, raw: v.Raw, flags: v.Flags, bits: v.Bits()}
		if cInts {
			f.bits = cIntBits(v)
		}
		s := v.Flags
		for len(s) > 0 && (s[0] == '-' || s[0] == '0') {
			if s[0] == '-' {
				f.left, f.zero = true, false
			} else if !f.left {
				f.zero = true
			}
			s = s[1:]
		}
		for _, c := range []byte(s) {
			if c < '0' || c > '9' || f.width > 1<<20 {
				f.slow = true
				break
			}
			f.width = f.width*10 + int(c-'0')
		}
		// fmt zero-pads strings and characters too; keep those to fmt.
		if f.zero && (v.Conv == 's' || v.Conv == 'p' || v.Conv == 'c' || v.Conv == 'r') {
			f.slow = true
		}
		out[i] = f
	}
	return out
}

// pad justifies the text appended since start to the verb's width, in
// runes as fmt counts them.
func (v *verbFmt) pad(dst []byte, start int) []byte {
	if v.slow {
		s := string(dst[start:])
		return fmt.Appendf(dst[:start], "%"+v.flags+"s", s)
	}
	if v.left {
		return padRight(dst, start, v.width)
	}
	return padLeft(dst, start, v.width, ' ')
}

// appendInt appends an integer conversion (d, u, x, X, o).
func (v *verbFmt) appendInt(dst []byte, n uint64, signed bool) []byte {
	if v.slow {
		conv := string(v.conv)
		if conv == "u" {
			conv = "d"
		}
		if signed {
			return fmt.Appendf(dst, "%"+v.flags+conv, int64(n))
		}
		return fmt.Appendf(dst, "%"+v.flags+conv, n)
	}
	start := len(dst)
	neg := signed && int64(n) < 0
	if neg {
		dst = append(dst, '-')
		n = -n
	}
	digits := len(dst)
	switch v.conv {
	case 'x', 'X':
		dst = strconv.AppendUint(dst, n, 16)
		if v.conv == 'X' {
			copy(dst[digits:], bytes.ToUpper(dst[digits:]))
		}
	case 'o':
		dst = strconv.AppendUint(dst, n, 8)
	default:
		dst = strconv.AppendUint(dst, n, 10)
	}
	switch {
	case v.left:
		return padRight(dst, start, v.width)
	case v.zero:
		// Zeros go between the sign and the digits.
		return padLeft(dst, digits, v.width-(digits-start), '0')
	}
	return padLeft(dst, start, v.width, ' ')
}

// padRight appends spaces until what follows start is width runes.
func padRight(dst []byte, start, width int) []byte {
	for n := utf8.RuneCount(dst[start:]); n < width; n++ {
		dst = append(dst, ' ')
	}
	return dst
}

// padLeft inserts c before what follows start until it is width runes.
func padLeft(dst []byte, start, width int, c byte) []byte {
	n := width - utf8.RuneCount(dst[start:])
	if n <= 0 {
		return dst
	}
	end := len(dst)
	for range n {
		dst = append(dst, c)
	}
	copy(dst[start+n:], dst[start:end])
	for i := start; i < start+n; i++ {
		dst[i] = c
	}
	return dst
}

// appendPadded appends s justified to width with c.
func appendPadded(dst, s []byte, width int, left bool, c byte) []byte {
	start := len(dst)
	dst = append(dst, s...)
	if left {
		return padRight(dst, start, width)
	}
	return padLeft(dst, start, width, c)
}

// appendJSONString appends s quoted as encoding/json quotes it (HTML
// characters, control characters, invalid UTF-8 and U+2028/9 escaped),
// without allocating.
func appendJSONString[S ~string | ~[]byte](dst []byte, s S) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
