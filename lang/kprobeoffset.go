package lang

import (
	"strconv"
	"strings"
)

// kprobeOffset splits bpftrace's kprobe:FN+OFFSET (an instruction OFFSET
// bytes into FN) into the function, which it returns, and s.Offset. Only
// kprobe takes one: a kretprobe, fentry or fexit fires at the function's
// entry or return, and a glob names no one function to count bytes in.
func (l *lowerer) kprobeOffset(sp Span, s *ProbeSpec, k ProbeKind, rest string) string {
	name, off, ok := strings.Cut(rest, "+")
	if !ok {
		return rest
	}
	n, err := strconv.ParseUint(off, 0, 64)
	switch {
	case k != ProbeKprobe:
		l.diags.Add(sp, "only kprobe:FN+OFFSET fires inside a function; drop +"+off, "%s: offset not allowed on a %s probe", s.Text, k)
	case err != nil || name == "":
		l.diags.Add(sp, "write kprobe:FUNCTION+OFFSET, OFFSET a number of bytes (decimal or 0x hex), e.g. kprobe:ip_rcv+4", "invalid offset in %q", s.Text)
	case strings.ContainsAny(name, "*?["):
		l.diags.Add(sp, "an offset is counted in one function: name it, e.g. kprobe:ip_rcv+4", "%s: an offset needs one function, not a glob", s.Text)
	default:
		s.Offset = n
	}
	return name
}
