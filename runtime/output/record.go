package output

import (
	"encoding/binary"
	"encoding/json"
	"net/netip"
	"strconv"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/lang/types"
	"github.com/skbtrace/skbtrace/runtime/kernel"
)

// The pieces of a print record every format shows: where it comes from,
// its values as name=value (text) or as a JSON object.

// where names the function or tracepoint a print record comes from.
func (p *Printer) where(ev *codegen.Event, b []byte) string {
	fn := binary.LittleEndian.Uint64(b[codegen.PrintFunc:])
	if fn == 0 {
		return ev.Probe
	}
	name, ok := p.funcs[fn]
	if !ok {
		// Traced functions and __traceiter_ symbols are there from boot:
		// the reading discovery made serves (stacks, which may show
		// programs loaded since, read kallsyms anew).
		name = kernel.Kallsyms().Name(fn)
		p.funcs[fn] = name
	}
	return name
}

// appendHop appends the function, padded, and the values as name=value:
// the end of a print line, and a hop of a timeline block.
func (p *Printer) appendHop(dst []byte, where string, ev *codegen.Event, b []byte) []byte {
	start := len(dst)
	dst = append(dst, where...)
	dst = padRight(dst, start, 24)
	for _, a := range ev.Args {
		dst = append(dst, ' ')
		dst = append(dst, a.Name...)
		dst = append(dst, '=')
		dst = p.appendArg(dst, where, a, b[a.Offset:a.Offset+a.Size])
	}
	return append(dst, '\n')
}

// formatAddr renders an address value: 16 bytes, then the family (4 or 6).
func formatAddr(raw []byte) string { return string(appendAddr(nil, raw)) }

// appendAddr appends formatAddr's text.
func appendAddr(dst, raw []byte) []byte {
	switch raw[16] {
	case 4:
		return netip.AddrFrom4([4]byte(raw[:4])).AppendTo(dst)
	case 6:
		return netip.AddrFrom16([16]byte(raw[:16])).AppendTo(dst)
	}
	return append(dst, '-')
}

// appendJSONData appends a print record's values as one JSON object, by
// name in json.Marshal's order: an event's "data", a timeline hop's.
func (p *Printer) appendJSONData(dst []byte, where string, ev *codegen.Event, b []byte) []byte {
	dst = append(dst, '{')
	for i, a := range p.jsonArgs[ev] {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, a.Name)
		dst = append(dst, ':')
		dst = p.appendJSONValue(dst, where, a, b[a.Offset:a.Offset+a.Size])
	}
	return append(dst, '}')
}

// appendJSONValue appends a value as JSON shows it: plain integers as
// numbers, stacks as arrays of frames, a mixed retval as its function
// returns it (appendJSONRet), the rest as strings of their text. where is
// the record's function.
func (p *Printer) appendJSONValue(dst []byte, where string, a codegen.EventArg, raw []byte) []byte {
	t := a.Type
	switch {
	case jsonNumber(t):
		if t.Signed {
			return strconv.AppendInt(dst, int64(binary.LittleEndian.Uint64(raw)), 10)
		}
		return strconv.AppendUint(dst, binary.LittleEndian.Uint64(raw), 10)
	case t.Kind == types.Int && t.Fmt == types.FmtRet:
		rc, ok := p.rets[where]
		return appendJSONRet(dst, rc, ok, raw)
	case t.Kind == types.Stack:
		b, _ := json.Marshal(p.fmt.jsonValue(t, raw))
		return append(dst, b...)
	case t.Kind == types.Tuple:
		return p.fmt.appendTupleJSON(dst, t, raw)
	case t.Kind == types.Struct:
		return btfFormat{json: true}.append(dst, t.BTF, raw, 0)
	}
	p.scratch = p.fmt.appendValue(p.scratch[:0], t, raw)
	return appendJSONString(dst, p.scratch)
}

// jsonLine marshals v as one line; map keys come out sorted.
func jsonLine(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"type": "error", "data": err.Error()})
	}
	return string(b) + "\n"
}
