package lang

import (
	"strconv"
	"strings"
)

// uprobeSpec splits a uprobe's or uretprobe's target, as bpftrace does:
// BINARY:FUNC, BINARY:FUNC+OFFSET (uprobe only) or BINARY:ADDRESS. BINARY
// is a path, a library name (libc) or a command in PATH; FUNC may be a
// glob. The checker finds the binary and its functions.
func (l *lowerer) uprobeSpec(sp Span, s *ProbeSpec, rest string) {
	k := s.Kind
	parts := strings.Split(rest, ":")
	example := "write " + string(k) + ":BINARY:FUNCTION, e.g. " + string(k) + ":/bin/bash:readline or " + string(k) + ":libc:getaddrinfo"
	switch {
	case len(parts) == 3:
		l.diags.Add(sp, example, "%s: language-qualified functions (%s) are not supported", s.Text, parts[1])
		return
	case len(parts) != 2 || parts[0] == "" || parts[1] == "":
		l.diags.Add(sp, example, "invalid %s %q", k, s.Text)
		return
	case strings.ContainsAny(parts[0], "*?["):
		l.diags.Add(sp, "name one binary: a path, a library name such as libc, or a command in PATH", "%s: a glob in the binary is not supported", s.Text)
		return
	}
	s.Binary = parts[0]
	fn := parts[1]
	if name, off, ok := strings.Cut(fn, "+"); ok {
		n, err := strconv.ParseUint(off, 0, 64)
		switch {
		case k == ProbeUretprobe:
			l.diags.Add(sp, "a uretprobe fires at the function's return: drop +"+off, "%s: a uretprobe cannot take an offset", s.Text)
			return
		case err != nil || name == "" || strings.ContainsAny(name, "*?[+"):
			l.diags.Add(sp, "write "+string(k)+":BINARY:FUNCTION+OFFSET, OFFSET a number of bytes (decimal or 0x hex)", "invalid offset in %q", s.Text)
			return
		}
		s.Name, s.Offset = name, n
		return
	}
	if a, err := strconv.ParseUint(fn, 0, 64); err == nil {
		s.Address = a
		return
	}
	s.Name = fn
}
