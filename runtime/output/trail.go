package output

import (
	"slices"

	"github.com/skbtrace/skbtrace/codegen"
)

// trail is the pods and containers a block's packet was seen in, in the
// order it reached them, each once: a timeline's or a graph's header
// names them (default/a > default/b), JSON as "pods".
type trail []string

// add takes a record's name (Printer.eventName) into the trail.
func (tr *trail) add(p *Printer, ev *codegen.Event, b []byte) {
	n, ok := p.eventName(ev, b)
	if !ok || n.Label == "" || slices.Contains(*tr, n.Label) {
		return
	}
	*tr = append(*tr, n.Label)
}

// appendText appends " (default/a > default/b)"; nothing for an empty trail.
func (tr trail) appendText(dst []byte) []byte {
	if len(tr) == 0 {
		return dst
	}
	dst = append(dst, " ("...)
	for i, l := range tr {
		if i > 0 {
			dst = append(dst, " > "...)
		}
		dst = append(dst, l...)
	}
	return append(dst, ')')
}

// appendJSON appends `,"pods":["default/a","default/b"]`; nothing for an
// empty trail.
func (tr trail) appendJSON(dst []byte) []byte {
	if len(tr) == 0 {
		return dst
	}
	dst = append(dst, `,"pods":[`...)
	for i, l := range tr {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, l)
	}
	return append(dst, ']')
}
