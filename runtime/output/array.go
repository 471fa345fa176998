package output

import (
	"bytes"
	"encoding/binary"
	"math"
	"strconv"

	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/lang/types"
)

// appendArray appends an array as bpftrace prints one: of integers
// [1,2,3,4], of pointers [0xffff888100000000,0x0], of structs
// [{ .a = 1, .b = 0x0 },...]; in JSON (asJSON) pointers are numbers and
// structs objects, {"a": 1, "b": 0}. ok is false for a value that is no
// such array.
func appendArray(dst []byte, t types.Type, raw []byte, asJSON bool) ([]byte, bool) {
	a, isArray := t.BTF.(*btf.Array)
	if !isArray {
		return dst, false
	}
	return btfFormat{json: asJSON}.append(dst, a, raw, 0), true
}

// btfFormat formats values by their BTF types, as text or as JSON.
type btfFormat struct{ json bool }

// appendBTF appends a value of BTF type t from its bytes, as bpftrace
// prints a struct's members: integers in decimal, enums as their
// number, pointers in hex, arrays in brackets, structs and unions as
// { .name = value, ... } (bitfields cut out of their bytes).
func (bf btfFormat) append(dst []byte, t btf.Type, raw []byte, depth int) []byte {
	switch u := btf.UnderlyingType(t).(type) {
	case *btf.Int:
		if u.Encoding&btf.Bool != 0 {
			return strconv.AppendBool(dst, leUint(raw, int(u.Size)) != 0)
		}
		return bf.int(dst, raw, int(u.Size), u.Encoding&btf.Signed != 0)
	case *btf.Enum:
		if !bf.json {
			// Text names a known value, as bpftrace does (TT_NONE);
			// JSON keeps the number.
			v := leUint(raw, int(u.Size))
			for _, ev := range u.Values {
				if ev.Value&(1<<(8*u.Size)-1) == v {
					return append(dst, ev.Name...)
				}
			}
		}
		return bf.int(dst, raw, int(u.Size), u.Signed)
	case *btf.Pointer:
		if bf.json {
			return bf.int(dst, raw, 8, false) // a kernel address quoted, as bpftrace's
		}
		return strconv.AppendUint(append(dst, "0x"...), leUint(raw, 8), 16)
	case *btf.Array:
		size, err := btf.Sizeof(u.Type)
		if err != nil || size <= 0 || depth > 8 {
			return append(dst, "[]"...)
		}
		dst = append(dst, '[')
		for i := 0; i < int(u.Nelems) && (i+1)*size <= len(raw); i++ {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = bf.append(dst, u.Type, raw[i*size:(i+1)*size], depth+1)
		}
		return append(dst, ']')
	case *btf.Struct:
		return bf.members(dst, u.Members, raw, depth)
	case *btf.Union:
		return bf.members(dst, u.Members, raw, depth)
	}
	return append(dst, "null"...)
}

// members appends a struct's or union's members: { .a = 1, .b = 2 },
// in JSON {"a": 1, "b": 2}.
func (bf btfFormat) members(dst []byte, ms []btf.Member, raw []byte, depth int) []byte {
	open, close := "{ ", " }"
	if bf.json {
		open, close = "{", "}"
	}
	first := true
	fields := bf.fields(nil, ms, raw, depth, &first)
	if first {
		return append(dst, "{}"...) // no members
	}
	return append(append(append(dst, open...), fields...), close...)
}

// fields appends members, ", " between them (first says whether one
// was appended yet); an anonymous struct's or union's members stand
// among those of the struct that holds it, as bpftrace prints them.
func (bf btfFormat) fields(dst []byte, ms []btf.Member, raw []byte, depth int, first *bool) []byte {
	for _, m := range ms {
		off := int(m.Offset.Bytes())
		if m.Name == "" && m.BitfieldSize == 0 {
			if inner := types.Members(m.Type); inner != nil {
				size, err := btf.Sizeof(m.Type)
				if err == nil && off+size <= len(raw) && depth < 16 {
					dst = bf.fields(dst, inner, raw[off:off+size], depth+1, first)
				}
				continue
			}
		}
		if !*first {
			dst = append(dst, ", "...)
		}
		*first = false
		if bf.json {
			dst = append(appendBtJSONString(dst, m.Name), ": "...)
		} else {
			dst = append(append(append(dst, '.'), m.Name...), " = "...)
		}
		if m.BitfieldSize > 0 {
			start := int(m.Offset) / 64 * 8
			word := leUint(raw[min(start, len(raw)):], 8)
			v := word >> (uint(m.Offset) % 64) & (1<<m.BitfieldSize - 1)
			dst = strconv.AppendUint(dst, v, 10)
			continue
		}
		size, err := btf.Sizeof(m.Type)
		if err != nil || off+size > len(raw) {
			dst = append(dst, "null"...)
			continue
		}
		if charArray(m.Type) {
			// bpftrace reads a member char name[N] as a string.
			dst = bf.str(dst, raw[off:off+size])
			continue
		}
		dst = bf.append(dst, m.Type, raw[off:off+size], depth+1)
	}
	return dst
}

// int appends a little-endian integer of size bytes; JSON quotes an
// unsigned one above the largest int64, as bpftrace's does.
func (bf btfFormat) int(dst, raw []byte, size int, signed bool) []byte {
	if size <= 0 || size > 8 {
		return append(dst, "null"...)
	}
	v := leUint(raw, size)
	if signed {
		shift := 64 - 8*size
		return strconv.AppendInt(dst, int64(v)<<shift>>shift, 10)
	}
	if bf.json && v > math.MaxInt64 {
		return append(strconv.AppendUint(append(dst, '"'), v, 10), '"')
	}
	return strconv.AppendUint(dst, v, 10)
}

// leUint reads up to 8 little-endian bytes of raw (fewer where raw is
// shorter).
func leUint(raw []byte, size int) uint64 {
	var b [8]byte
	copy(b[:], raw[:min(size, len(raw), 8)])
	return binary.LittleEndian.Uint64(b[:])
}

// charArray reports whether t is an array of bytes (char name[16]),
// which bpftrace prints as a string.
func charArray(t btf.Type) bool {
	a, ok := btf.UnderlyingType(t).(*btf.Array)
	if !ok {
		return false
	}
	e, ok := btf.UnderlyingType(a.Type).(*btf.Int)
	return ok && e.Size == 1 && e.Encoding&btf.Bool == 0
}

// str appends a byte array's text up to its first NUL: as it is in
// text, a JSON string in JSON.
func (bf btfFormat) str(dst, raw []byte) []byte {
	if i := bytes.IndexByte(raw, 0); i >= 0 {
		raw = raw[:i]
	}
	if bf.json {
		return appendBtJSONString(dst, string(raw))
	}
	return append(dst, raw...)
}
