package lang

// testSpec reads bpftrace 0.26's test:NAME and bench:NAME: a probe that
// --test (or --bench) runs once (or many times, timed) with
// BPF_PROG_TEST_RUN, by its NAME, an identifier.
func (l *lowerer) testSpec(sp Span, s *ProbeSpec, rest string) {
	if !isIdent(rest) {
		l.diags.Add(sp, "write "+string(s.Kind)+":NAME, NAME letters, digits and _, e.g. "+string(s.Kind)+":parse_flags", "invalid %s probe %q", s.Kind, s.Text)
		return
	}
	s.Name = rest
}
