package session

// Records is how many records the session has read from the event buffer
// so far: every print, printf and control record, each counted once as it
// is read. Safe to call while tracing.
func (s *Session) Records() uint64 { return s.records.Load() }
