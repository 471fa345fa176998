package output

import (
	"encoding/binary"
	"fmt"

	"github.com/skbtrace/skbtrace/codegen"
)

// printfBlock prints an EventBlock's record: the printf records in it (its
// head says how many bytes they take), in the probe's order, as one line
// of text (one JSON object), so that another CPU's lines never come
// between them.
func (p *Printer) printfBlock(b []byte) error {
	if len(b) < codegen.BlockHead {
		return fmt.Errorf("block record of %d bytes", len(b))
	}
	end := binary.LittleEndian.Uint64(b[8:])
	if end > uint64(len(b)) || end < codegen.BlockHead {
		return fmt.Errorf("block record of %d bytes says %d", len(b), end)
	}
	p.scratch = p.scratch[:0]
	for off := uint64(codegen.BlockHead); off+8 <= end; {
		id := binary.LittleEndian.Uint64(b[off:])
		if id >= uint64(len(p.events)) || p.events[id].Kind != codegen.EventPrintf || off+uint64(p.events[id].Size) > end {
			return fmt.Errorf("block record with unknown printf id %d", id)
		}
		ev := p.events[id]
		p.scratch = p.printf(p.scratch, ev, b[off:off+uint64(ev.Size)])
		off += uint64(ev.Size)
	}
	if len(p.scratch) > 0 {
		p.buf = p.f.Line(p.buf, LinePrintf, p.scratch)
	}
	if len(p.buf) >= flushAt {
		return p.flush()
	}
	return nil
}
