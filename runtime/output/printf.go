package output

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"time"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/stdlib"
)

// printf appends a printf record's text.
func (p *Printer) printf(dst []byte, ev *codegen.Event, b []byte) []byte {
	i := 0
	for _, v := range p.verbs[ev] {
		dst = append(dst, v.text...)
		if v.conv == 0 || i >= len(ev.Args) {
			continue
		}
		a := ev.Args[i]
		i++
		raw := b[a.Offset : a.Offset+a.Size]
		switch v.conv {
		case 'T':
			dst = appendStrftime(dst, v.flags, p.boot.Add(time.Duration(binary.LittleEndian.Uint64(raw))))
		case 's':
			start := len(dst)
			dst = p.fmt.appendNamed(dst, a.Type, raw)
			dst = v.pad(dst, start)
		case 'r':
			start := len(dst)
			dst = appendRaw(dst, raw, v.raw)
			dst = v.pad(dst, start)
		case 'p':
			start := len(dst)
			dst = strconv.AppendUint(append(dst, "0x"...), binary.LittleEndian.Uint64(raw), 16)
			dst = v.pad(dst, start)
		case 'c':
			if v.slow {
				dst = fmt.Appendf(dst, "%"+v.flags+"c", rune(raw[0]))
				break
			}
			start := len(dst)
			dst = append(dst, string(rune(raw[0]))...)
			dst = v.pad(dst, start)
		case 'g', 'G', 'e', 'E', 'f':
			if v.raw == 'r' { // %gr: GFP flags, bpftrace ignores a width
				dst = stdlib.AppendGFPFlags(dst, binary.LittleEndian.Uint64(raw))
				break
			}
			dst = v.appendFloat(dst, binary.LittleEndian.Uint64(raw), a.Type.Signed)
		default:
			// bpftrace's %d is signed whatever the value's type; hh and h
			// truncate as C does (printflen.go).
			dst = v.appendInt(dst, v.truncate(binary.LittleEndian.Uint64(raw)), v.conv == 'd')
		}
	}
	return dst
}
