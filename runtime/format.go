package runtime

import (
	"strconv"
	"strings"

	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/lang/types"
	"github.com/skbtrace/skbtrace/stdlib"
)

// formatter prints values as the script's types say.
type formatter struct {
	ksyms ksyms
	// enumNames caches enumerator names by enum, prefix removed.
	enumNames map[*btf.Enum]map[uint64]string
}

func newFormatter() *formatter {
	return &formatter{enumNames: map[*btf.Enum]map[uint64]string{}}
}

// nameOf maps a constant's value to its name for a format, from stdlib's table.
func nameOf(f types.Fmt, v uint64) (string, bool) {
	for _, c := range stdlib.Consts {
		if c.Type.Fmt == f && c.Value == v && c.Name != "ip" {
			return c.Name, true
		}
	}
	return "", false
}

// formatInt renders a 64-bit value of an integer type.
func (f *formatter) formatInt(v uint64, t types.Type) string {
	switch t.Fmt {
	case types.FmtHex:
		return "0x" + strconv.FormatUint(v, 16)
	case types.FmtBool:
		return strconv.FormatBool(v != 0)
	case types.FmtKsym:
		return f.ksyms.name(v)
	case types.FmtEtherType, types.FmtIPProto, types.FmtPktType:
		if n, ok := nameOf(t.Fmt, v); ok {
			return n
		}
	case types.FmtTCPFlags:
		var names []string
		for _, c := range stdlib.Consts {
			if c.Type.Fmt == types.FmtTCPFlags && v&c.Value != 0 {
				names = append(names, c.Name)
			}
		}
		if len(names) > 0 {
			return strings.Join(names, "|")
		}
		return "0"
	case types.FmtEnum:
		if en, ok := t.BTF.(*btf.Enum); ok {
			if n, ok := f.enumName(en, v); ok {
				return n
			}
		}
	}
	if t.Signed {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatUint(v, 10)
}

func (f *formatter) enumName(en *btf.Enum, v uint64) (string, bool) {
	names, ok := f.enumNames[en]
	if !ok {
		names = map[uint64]string{}
		prefix := check.EnumPrefix(en)
		for _, e := range en.Values {
			names[e.Value] = strings.TrimPrefix(e.Name, prefix)
		}
		f.enumNames[en] = names
	}
	n, ok := names[v]
	return n, ok
}
