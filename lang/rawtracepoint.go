package lang

import "strings"

// rawTracepoint reads bpftrace's rawtracepoint:[MODULE:]NAME: a
// tracepoint by name alone (any category), read by its raw arguments. A
// glob in the name (rawtracepoint:sys_*) is every raw tracepoint it
// matches, which the checker lists (check/tpglob.go).
// The module, where given, is the one whose BTF describes it (vmlinux
// for the kernel's own); the tracepoint is found by its name either way.
func (l *lowerer) rawTracepoint(sp Span, s *ProbeSpec, rest string) {
	name := rest
	if mod, n, ok := strings.Cut(rest, ":"); ok {
		if mod == "" || strings.Contains(n, ":") {
			name = ""
		} else {
			name = n
		}
	}
	if name == "" || !isIdent(name) && !isIdentGlob(name) {
		l.diags.Add(sp, "write rawtracepoint:NAME or rawtracepoint:MODULE:NAME, e.g. rawtracepoint:kfree_skb", "invalid rawtracepoint %q", s.Text)
		return
	}
	s.Category, s.Name, s.Raw = "*", name, true
}

// isIdentGlob reports whether s is a name with glob characters:
// identifier characters and * ? [ ] only, at least one of the glob's.
func isIdentGlob(s string) bool {
	if !strings.ContainsAny(s, "*?[") {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '*' || r == '?' || r == '[' || r == ']' || r == '!' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
