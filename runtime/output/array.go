package output

import (
	"encoding/binary"
	"strconv"

	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/lang/types"
)

// arrayInts returns an array of integers' elements from its bytes, as
// bpftrace prints them: [1,2,3,4]; ok is false for another array.
func arrayInts(t types.Type, raw []byte) (elems []string, ok bool) {
	a, isArray := t.BTF.(*btf.Array)
	if !isArray {
		return nil, false
	}
	in, isInt := btf.UnderlyingType(a.Type).(*btf.Int)
	if !isInt || in.Size == 0 || in.Size > 8 {
		return nil, false
	}
	size := int(in.Size)
	for i := 0; i < int(a.Nelems) && (i+1)*size <= len(raw); i++ {
		var b [8]byte
		copy(b[:], raw[i*size:(i+1)*size])
		v := binary.LittleEndian.Uint64(b[:])
		if in.Encoding&btf.Signed != 0 {
			shift := 64 - 8*size
			elems = append(elems, strconv.FormatInt(int64(v)<<shift>>shift, 10))
		} else {
			elems = append(elems, strconv.FormatUint(v, 10))
		}
	}
	return elems, true
}

// appendArray appends an array of integers as bpftrace prints one,
// [1,2,3,4] (JSON's form too).
func appendArray(dst []byte, t types.Type, raw []byte) ([]byte, bool) {
	elems, ok := arrayInts(t, raw)
	if !ok {
		return dst, false
	}
	dst = append(dst, '[')
	for i, e := range elems {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, e...)
	}
	return append(dst, ']'), true
}
