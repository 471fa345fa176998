package output

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"golang.org/x/sys/unix"

	"github.com/skbtrace/skbtrace/codegen"

	"github.com/skbtrace/skbtrace/lang/types"
	"github.com/skbtrace/skbtrace/runtime/kernel"
	"github.com/skbtrace/skbtrace/runtime/rules"
	"github.com/skbtrace/skbtrace/stdlib"
)

// Values prints values as the script's types say.
type Values struct {
	ksyms *kernel.Symbols
	// enumNames caches enumerator names by enum, prefix removed, under
	// enumMu: maps are formatted for a metrics scrape while the printer
	// formats events.
	enumNames map[*btf.Enum]map[uint64]string
	enumMu    sync.Mutex
	// stacks is the stack trace map kstack values index, if the script
	// has one.
	stacks *ebpf.Map
	// boot is the wall-clock time of monotonic zero, for time values.
	boot time.Time
	// offsetBase is 16 for stack frames as sym+0x90, 10 for bpftrace's
	// sym+144.
	offsetBase int
	// fullEnums prints enumerators whole (TCP_CLOSE), as bpftrace does;
	// skbtrace's own output leaves their common prefix out (CLOSE).
	fullEnums bool
	// probeNames are the names probe values index (codegen.Output).
	probeNames []string
	// names, where set, resolves network namespaces, processes, devices
	// and addresses to pods and containers (names.go).
	names Names
	// rules, where set, names the rule or action behind a drop (rule.go).
	rules *rules.Namer
	// ruleKeys keeps the labels of rule() records in map keys
	// (rulelabel.go), shared by the copies of f.
	ruleKeys *ruleLabels
}

// value formats a value of any type from its bytes in a record or map
// key: strings to their NUL, addresses, stacks, integers by their format.
func (f *Values) value(t types.Type, raw []byte) string {
	return string(f.appendValue(nil, t, raw))
}

// appendValue appends value's text to dst: the event path formats into
// one buffer without allocating.
func (f *Values) appendValue(dst []byte, t types.Type, raw []byte) []byte {
	switch t.Kind {
	case types.String:
		if t.Fmt == types.FmtBuf {
			return appendBuf(dst, raw)
		}
		if t.Fmt == types.FmtUsym {
			return appendUsym(dst, raw)
		}
		cut := truncated(t, raw)
		if i := bytes.IndexByte(raw, 0); i >= 0 {
			raw = raw[:i]
		}
		dst = append(dst, raw...)
		if cut {
			trailer, set := strings.CutPrefix(t.Layout, types.TrailerPrefix)
			if !set {
				trailer = strTruncTrailer
			}
			dst = append(dst, trailer...)
		}
		return dst
	case types.Addr:
		return appendAddr(dst, raw)
	case types.Packet:
		return appendPacket(dst, raw)
	case types.Endpoint:
		port := binary.LittleEndian.Uint64(raw[codegen.AddrSize:])
		if raw[16] == 6 {
			dst = append(dst, '[')
			dst = appendAddr(dst, raw)
			dst = append(dst, "]:"...)
		} else {
			dst = appendAddr(dst, raw)
			dst = append(dst, ':')
		}
		return strconv.AppendUint(dst, port, 10)
	case types.Stack:
		// Each frame on a line of its own, indented as bpftrace's mode
		// indents it: 8 blanks, perf's a tab, raw's none.
		indent := map[string]string{"": "\n        ", "bpftrace": "\n        ", "perf": "\n\t", "raw": "\n"}[t.Layout]
		for _, fr := range f.stackOf(t, raw) {
			dst = append(dst, indent...)
			dst = append(dst, fr...)
		}
		return append(dst, '\n')
	case types.Array:
		if out, ok := appendArray(dst, t, raw, false); ok {
			return out
		}
	case types.Struct:
		return btfFormat{}.append(dst, t.BTF, raw, 0)
	case types.Tuple:
		if t.Fmt == types.FmtRule {
			return f.appendRule(dst, t, raw)
		}
		return f.appendTuple(dst, t, raw)
	}
	v := binary.LittleEndian.Uint64(raw)
	if t.Fmt.Named() {
		return f.appendResolved(dst, t.Fmt, v&0xffffffff)
	}
	if t.Kind == types.Ptr {
		return strconv.AppendUint(append(dst, "0x"...), v, 16)
	}
	return f.appendInt(dst, v, t)
}

// strTruncTrailer follows a string the read cut short, as bpftrace's
// str_trunc_trailer does by default.
const strTruncTrailer = ".."

// truncated reports whether a string read into a str() slot (64 bytes or
// more, of no special format) filled it: the kernel's read stops one byte
// short, for the NUL, so a string of slot-1 bytes or more reads as
// slot-1 bytes and a NUL at the end, where bpftrace (max_strlen bytes, no
// NUL kept) would mark it cut.
func truncated(t types.Type, raw []byte) bool {
	if t.Cut && t.Fmt == types.FmtDec && t.Size <= len(raw) {
		// max_strlen's: cut where its text fills the max_strlen bytes.
		i := bytes.IndexByte(raw[:t.Size], 0)
		return i < 0 || i == t.Size-1
	}
	if t.Fmt != types.FmtDec || len(raw) < 64 {
		return false
	}
	i := bytes.IndexByte(raw, 0)
	return i < 0 || i == len(raw)-1
}

// jsonValue is a value as JSON shows it: plain integers as numbers, stacks
// as arrays of frames, the rest as value formats them.
func (f *Values) jsonValue(t types.Type, raw []byte) any {
	switch {
	case jsonNumber(t):
		v := binary.LittleEndian.Uint64(raw)
		if t.Signed {
			return int64(v)
		}
		return v
	case t.Kind == types.Stack:
		return f.stackOf(t, raw)
	case t.Kind == types.Tuple:
		return json.RawMessage(f.appendTupleJSON(nil, t, raw))
	case t.Kind == types.Array:
		if out, ok := appendArray(nil, t, raw, true); ok {
			return json.RawMessage(out)
		}
	case t.Kind == types.Struct:
		return json.RawMessage(btfFormat{json: true}.append(nil, t.BTF, raw, 0))
	}
	return f.value(t, raw)
}

// jsonNumber reports whether JSON shows a value as a number: plain
// integers, and the IDs text follows with a name (a netns, a pid).
func jsonNumber(t types.Type) bool {
	return t.Kind == types.Int && (t.Fmt == types.FmtDec || t.Fmt == types.FmtNetns || t.Fmt == types.FmtPid)
}

// stack resolves a kstack id to its frames, innermost first.
func (f *Values) stack(id int64) []string { return f.stackAs(id, types.Type{Kind: types.Stack}) }

// stackOf is the frames of a stack value of type t: kstack(mode, limit)'s
// first limit frames (Size; 0: all), each as its mode (Layout) prints it:
// bpftrace's "name+off", perf's "address name+off", raw's address.
func (f *Values) stackOf(t types.Type, raw []byte) []string {
	return f.stackAs(int64(binary.LittleEndian.Uint64(raw)), t)
}

func (f *Values) stackAs(id int64, t types.Type) []string {
	if id < 0 || f.stacks == nil {
		// bpf_get_stackid failed: -EEXIST is a full bucket, -EFAULT no stack.
		return []string{fmt.Sprintf("[stack unavailable: %v]", unix.Errno(-id))}
	}
	pcs := make([]uint64, codegen.StackDepth)
	if err := f.stacks.Lookup(uint32(id), &pcs); err != nil {
		return []string{fmt.Sprintf("[stack %d unavailable: %v]", id, err)}
	}
	var frames []string
	for _, pc := range pcs {
		if pc == 0 {
			break
		}
		name := f.ksyms.Symbolize(pc, f.offsetBase)
		if len(frames) == 0 && isBPFFrame(name) {
			continue // the tracing program's own frames, above the traced code
		}
		if t.Size > 0 && len(frames) == t.Size {
			break
		}
		switch t.Layout {
		case "perf":
			name = strconv.FormatUint(pc, 16) + " " + name
		case "raw":
			name = strconv.FormatUint(pc, 16)
		}
		frames = append(frames, name)
	}
	return frames
}

// isBPFFrame reports whether a frame belongs to the tracing machinery: the
// program itself, the tracepoint's runner, or a trampoline.
func isBPFFrame(name string) bool {
	for _, p := range []string{"bpf_prog_", "bpf_trace_run", "__bpf_trace_", "bpf_trampoline", "__bpf_prog_enter", "kprobe_", "fprobe_", "ftrace_"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// NewValues is a value formatter with times from this boot, stack frames
// as sym+0x90 and no stack map yet.
func NewValues() *Values {
	var ts unix.Timespec
	boot := time.Now()
	if unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) == nil {
		boot = boot.Add(-time.Duration(ts.Nano()))
	}
	return &Values{ksyms: new(kernel.Symbols), enumNames: map[*btf.Enum]map[uint64]string{}, boot: boot, offsetBase: 16}
}

// SetStacks gives the stack trace map kstack values index.
func (f *Values) SetStacks(m *ebpf.Map) { f.stacks = m }

// SetProbeNames gives the names probe values index (codegen.Output's).
func (f *Values) SetProbeNames(names []string) { f.probeNames = names }

// DecimalOffsets prints stack frames' offsets as bpftrace does: sym+144,
// not sym+0x90.
func (f *Values) DecimalOffsets() { f.offsetBase = 10 }

// FullEnumNames formats as bpftrace's output does: enumerators whole
// (TCP_CLOSE), and printf's %d, %u, %x... without a length modifier as
// C's int, 32 bits (printflen.go).
func (f *Values) FullEnumNames() { f.fullEnums = true }

// Boot is the wall-clock time of monotonic zero that times print from.
func (f *Values) Boot() time.Time { return f.boot }

// Value formats a value of any type from its bytes, as every format but
// JSON's numbers shows it.
func (f *Values) Value(t types.Type, raw []byte) string { return f.value(t, raw) }

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
func (f *Values) formatInt(v uint64, t types.Type) string {
	return string(f.appendInt(nil, v, t))
}

// appendInt appends formatInt's text to dst.
func (f *Values) appendInt(dst []byte, v uint64, t types.Type) []byte {
	switch t.Fmt {
	case types.FmtHex:
		return strconv.AppendUint(append(dst, "0x"...), v, 16)
	case types.FmtBool:
		return strconv.AppendBool(dst, v != 0)
	case types.FmtMAC:
		const digits = "0123456789abcdef"
		for i := 0; i < 6; i++ {
			if i > 0 {
				dst = append(dst, ':')
			}
			b := byte(v >> (8 * i))
			dst = append(dst, digits[b>>4], digits[b&0xf])
		}
		return dst
	case types.FmtKsym:
		if v == 0 {
			return append(dst, '0') // bpftrace's ksym(0)
		}
		return append(dst, f.ksyms.Name(v)...)
	case types.FmtStrftime:
		return appendStrftime(dst, t.Layout, f.boot.Add(time.Duration(v)))
	case types.FmtProbe:
		return f.appendProbe(dst, v)
	case types.FmtTime:
		return f.boot.Add(time.Duration(v)).AppendFormat(dst, "15:04:05")
	case types.FmtTCPState:
		if v < uint64(len(tcpStates)) && tcpStates[v] != "" {
			return append(dst, tcpStates[v]...)
		}
	case types.FmtEtherType, types.FmtIPProto, types.FmtPktType, types.FmtCtState, types.FmtNfHook:
		if n, ok := nameOf(t.Fmt, v); ok {
			return append(dst, n...)
		}
		if t.Fmt == types.FmtNfHook {
			return append(dst, '-') // outside netfilter
		}
	case types.FmtTCPFlags:
		start := len(dst)
		for _, c := range stdlib.Consts {
			if c.Type.Fmt == types.FmtTCPFlags && v&c.Value != 0 {
				if len(dst) > start {
					dst = append(dst, '|')
				}
				dst = append(dst, c.Name...)
			}
		}
		if len(dst) == start {
			dst = append(dst, '0')
		}
		return dst
	case types.FmtDropWhy:
		if en, ok := t.BTF.(*btf.Enum); ok {
			if n, ok := f.enumName(en, v); ok {
				if why, ok := stdlib.DropReasons[n]; ok {
					return append(dst, why...)
				}
				return append(append(dst, n...), " (no explanation known)"...)
			}
		}
	case types.FmtEnum:
		if en, ok := t.BTF.(*btf.Enum); ok {
			if n, ok := f.enumName(en, v); ok {
				return append(dst, n...)
			}
		}
	}
	if t.Signed {
		return strconv.AppendInt(dst, int64(v), 10)
	}
	return strconv.AppendUint(dst, v, 10)
}

// appendBuf appends buf()'s bytes (a length byte, then the bytes) as
// bpftrace prints a buffer: printable ASCII as it is, every other byte as
// \x01.
func appendBuf(dst, raw []byte) []byte { return appendRaw(dst, raw, 0) }

// appendRaw appends buf()'s bytes as bpftrace's %r prints them (mode 0,
// appendBuf's), %rx (mode 'x': every byte \x41) or %rh (mode 'h': every
// byte in hex, a space between them: 41 0a).
func appendRaw(dst, raw []byte, mode byte) []byte {
	if len(raw) == 0 {
		return dst
	}
	n := min(int(raw[0]), len(raw)-1)
	const digits = "0123456789abcdef"
	for i, b := range raw[1 : 1+n] {
		switch {
		case mode == 'h':
			if i > 0 {
				dst = append(dst, ' ')
			}
			dst = append(dst, digits[b>>4], digits[b&0xf])
		case mode == 0 && b >= 0x20 && b < 0x7f:
			dst = append(dst, b)
		default:
			dst = append(dst, '\\', 'x', digits[b>>4], digits[b&0xf])
		}
	}
	return dst
}

// appendProbe appends a probe value's name (codegen/probename.go): an
// index from 1 into the script's names, or a function's address, with bit
// 63 cleared on a return program.
func (f *Values) appendProbe(dst []byte, v uint64) []byte {
	switch {
	case v >= 1 && v <= uint64(len(f.probeNames)):
		return append(dst, f.probeNames[v-1]...)
	case v>>63 == 1:
		return append(append(dst, "kprobe:"...), f.ksyms.Name(v)...)
	case v>>62 == 1:
		return append(append(dst, "kretprobe:"...), f.ksyms.Name(v|1<<63)...)
	}
	return append(dst, "kprobe:?"...) // no bpf_get_func_ip: the function is not known
}

func (f *Values) enumName(en *btf.Enum, v uint64) (string, bool) {
	f.enumMu.Lock()
	defer f.enumMu.Unlock()
	names, ok := f.enumNames[en]
	if !ok {
		names = map[uint64]string{}
		prefix := types.EnumPrefix(en)
		if f.fullEnums {
			prefix = ""
		}
		for _, e := range en.Values {
			names[e.Value] = strings.TrimPrefix(e.Name, prefix)
		}
		f.enumNames[en] = names
	}
	n, ok := names[v]
	return n, ok
}

// tcpStates names the kernel's TCP states (include/net/tcp_states.h).
var tcpStates = []string{"-", "ESTABLISHED", "SYN_SENT", "SYN_RECV", "FIN_WAIT1", "FIN_WAIT2", "TIME_WAIT",
	"CLOSE", "CLOSE_WAIT", "LAST_ACK", "LISTEN", "CLOSING", "NEW_SYN_RECV", "BOUND_INACTIVE"}
