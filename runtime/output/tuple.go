package output

import (
	"encoding/binary"
	"encoding/json"
	"strconv"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/lang/types"
)

// Tuples print as bpftrace prints them: (1, a, (2, 3)), strings bare; a
// record as bpftrace prints a record, { .a = 1, .b = str }. In JSON a
// tuple is an array, [1,"a",[2,3]], and a record an object, {"a": 1,
// "b": "str"}, as bpftrace -f json writes them.

// appendTuple appends a tuple's or record's text.
func (f *Values) appendTuple(dst []byte, t types.Type, raw []byte) []byte {
	parts := codegen.TupleLayout(t)
	if t.IsRecord() {
		dst = append(dst, '{')
		for i, p := range parts {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, " ."...)
			dst = append(dst, t.Tuple.Names[i]...)
			dst = append(dst, " = "...)
			dst = f.appendValue(dst, p.Type, raw[p.Offset:p.Offset+p.Size])
		}
		return append(dst, " }"...)
	}
	dst = append(dst, '(')
	for i, p := range parts {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		dst = f.appendValue(dst, p.Type, raw[p.Offset:p.Offset+p.Size])
	}
	return append(dst, ')')
}

// appendTupleJSON appends a tuple as a JSON array, a record as an object.
func (f *Values) appendTupleJSON(dst []byte, t types.Type, raw []byte) []byte {
	parts := codegen.TupleLayout(t)
	open, close, sep := byte('['), byte(']'), ","
	if t.IsRecord() {
		open, close, sep = '{', '}', ", "
	}
	dst = append(dst, open)
	for i, p := range parts {
		if i > 0 {
			dst = append(dst, sep...)
		}
		if t.IsRecord() {
			dst = appendJSONString(dst, t.Tuple.Names[i])
			dst = append(dst, ": "...)
		}
		dst = f.appendElemJSON(dst, p.Type, raw[p.Offset:p.Offset+p.Size])
	}
	return append(dst, close)
}

// appendElemJSON appends a tuple's element as JSON: numbers and booleans
// as such, stacks as arrays of frames, tuples nested, the rest as strings
// of their text.
func (f *Values) appendElemJSON(dst []byte, t types.Type, raw []byte) []byte {
	switch {
	case t.Kind == types.Tuple:
		return f.appendTupleJSON(dst, t, raw)
	case t.Kind == types.Int && t.Fmt == types.FmtDec && t.Signed:
		return strconv.AppendInt(dst, int64(binary.LittleEndian.Uint64(raw)), 10)
	case t.Kind == types.Int && t.Fmt == types.FmtDec:
		return strconv.AppendUint(dst, binary.LittleEndian.Uint64(raw), 10)
	case t.Kind == types.Int && t.Fmt == types.FmtBool:
		return strconv.AppendBool(dst, binary.LittleEndian.Uint64(raw) != 0)
	case t.Kind == types.Stack:
		b, _ := json.Marshal(f.stackOf(t, raw))
		return append(dst, b...)
	}
	return appendJSONString(dst, f.appendValue(nil, t, raw))
}
