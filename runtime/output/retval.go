package output

import (
	"encoding/binary"
	"strconv"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/lang/types"
)

// appendRet appends a value as function fn returns it: a pointer in hex,
// an integer in decimal (the program sign- or zero-extended it), void as
// "void". A function not known here prints as a signed integer.
func appendRet(dst []byte, rc codegen.RetClass, known bool, raw []byte) []byte {
	v := binary.LittleEndian.Uint64(raw)
	switch {
	case !known:
		return strconv.AppendInt(dst, int64(v), 10)
	case rc.Size == 0:
		return append(dst, "void"...)
	case rc.Ptr:
		return strconv.AppendUint(append(dst, "0x"...), v, 16)
	case rc.Signed:
		return strconv.AppendInt(dst, int64(v), 10)
	}
	return strconv.AppendUint(dst, v, 10)
}

// appendJSONRet appends a value as its function returns it, in JSON: an
// integer as a number, a pointer as a string in hex (as JSON shows every
// pointer), void as null.
func appendJSONRet(dst []byte, rc codegen.RetClass, known bool, raw []byte) []byte {
	switch {
	case known && rc.Size == 0:
		return append(dst, "null"...)
	case known && rc.Ptr:
		dst = append(dst, '"')
		return append(appendRet(dst, rc, known, raw), '"')
	}
	return appendRet(dst, rc, known, raw)
}

// appendArg appends a print argument's value; where is the record's
// function, which a mixed retval is printed by.
func (p *Printer) appendArg(dst []byte, where string, a codegen.EventArg, raw []byte) []byte {
	if a.Type.Kind == types.Int && a.Type.Fmt == types.FmtRet {
		rc, ok := p.rets[where]
		return appendRet(dst, rc, ok, raw)
	}
	return p.fmt.appendNamed(dst, a.Type, raw)
}
