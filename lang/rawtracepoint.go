package lang

import "strings"

// rawTracepoint reads bpftrace's rawtracepoint:[MODULE:]NAME: a
// tracepoint by name alone (any category), read by its raw arguments.
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
	if name == "" || !isIdent(name) {
		l.diags.Add(sp, "write rawtracepoint:NAME or rawtracepoint:MODULE:NAME, e.g. rawtracepoint:kfree_skb", "invalid rawtracepoint %q", s.Text)
		return
	}
	s.Category, s.Name, s.Raw = "*", name, true
}
