package output

import (
	"encoding/binary"
	"strconv"

	"github.com/skbtrace/skbtrace/internal/userbin"
	"github.com/skbtrace/skbtrace/stdlib"
)

// appendUsym appends a usym() value: the function of the process's
// binaries that holds the address, found when it is printed (bpftrace
// also resolves user symbols then), or the address in hex where the
// process has gone or no symbol holds it.
func appendUsym(dst, raw []byte) []byte {
	if len(raw) < stdlib.UsymSize {
		return append(dst, '?')
	}
	addr := binary.LittleEndian.Uint64(raw)
	pid := uint32(binary.LittleEndian.Uint64(raw[8:]))
	if name, ok := userbin.Symbolize(pid, addr); ok {
		return append(dst, name...)
	}
	dst = append(dst, "0x"...)
	return strconv.AppendUint(dst, addr, 16)
}
