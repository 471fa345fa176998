package output

import (
	"encoding/binary"
	"fmt"

	"github.com/skbtrace/skbtrace/codegen"
)

// printfBlock prints an EventBlock's record: the printf records present in
// it, in the probe's order, as one line of text (one JSON object), so that
// another CPU's lines never come between them.
func (p *Printer) printfBlock(ev *codegen.Event, b []byte) error {
	p.scratch = p.scratch[:0]
	for _, off := range ev.Slots {
		if off+8 > len(b) {
			return fmt.Errorf("block record of %d bytes cut short", len(b))
		}
		sub := b[off:]
		id := binary.LittleEndian.Uint64(sub)
		if id == codegen.BlockAbsent {
			continue
		}
		if id >= uint64(len(p.events)) || p.events[id].Kind != codegen.EventPrintf || len(sub) < p.events[id].Size {
			return fmt.Errorf("block record with unknown printf id %d", id)
		}
		p.scratch = p.printf(p.scratch, p.events[id], sub[:p.events[id].Size])
	}
	if len(p.scratch) > 0 {
		p.buf = p.f.Line(p.buf, LinePrintf, p.scratch)
	}
	if len(p.buf) >= flushAt {
		return p.flush()
	}
	return nil
}
