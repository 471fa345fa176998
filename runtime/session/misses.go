package session

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"
)

// What a miss is. Each names a counter skbtrace_<what>_total in the
// metrics; another part of skbtrace adds its own (sampled out, capped)
// through Session.AddMisses with a name of its choosing.
const (
	// MissProgramsSkipped counts runs of a probe's program the kernel
	// skipped: recursion (the program, or on kprobes any BPF program,
	// was already running on that CPU) or a kprobe that missed.
	MissProgramsSkipped = "programs_skipped"
	// MissEventsLost counts records the programs found no room for in
	// the ring or perf buffer (Session.Lost).
	MissEventsLost = "events_lost"
	// MissFunctionsSkipped counts functions an skb: or kprobe glob
	// matched that did not attach, by reason.
	MissFunctionsSkipped = "functions_skipped"
	// MissCapturesTruncated counts -w's frames cut to the snap length.
	MissCapturesTruncated = "captures_truncated"
)

// Miss is one count of what skbtrace did not see: what kind of miss, the
// probe it was on ("" where it is no one probe's), why, and how many.
type Miss struct {
	What   string
	Probe  string
	Reason string
	Count  uint64
	// Uncounted says this kernel keeps no count of this kind of miss:
	// Count is meaningless and the summary says "not counted" once,
	// rather than 0 as if counted.
	Uncounted bool
	// Detail names what was missed where there is a list (the
	// functions skipped), for -v; not a metric label.
	Detail []string
}

// MissReader adds a part of skbtrace's misses as they are now.
type MissReader func(*Misses)

// Misses is the summary of what skbtrace did not see: a list of entries,
// one for each kind, probe and reason, summed as they are added.
type Misses struct {
	entries []Miss
	at      map[missKey]int
}

type missKey struct {
	what, probe, reason string
	uncounted           bool
}

// Add sums e into the entry of its kind, probe and reason, or adds it.
func (m *Misses) Add(e Miss) {
	k := missKey{e.What, e.Probe, e.Reason, e.Uncounted}
	if m.at == nil {
		m.at = map[missKey]int{}
	}
	if i, ok := m.at[k]; ok {
		m.entries[i].Count += e.Count
		m.entries[i].Detail = append(m.entries[i].Detail, e.Detail...)
		return
	}
	m.at[k] = len(m.entries)
	e.Detail = slices.Clone(e.Detail)
	m.entries = append(m.entries, e)
}

// Merge adds every entry of o.
func (m *Misses) Merge(o *Misses) {
	if o == nil {
		return
	}
	for _, e := range o.entries {
		m.Add(e)
	}
}

// Entries are the entries, ordered by kind (the kinds above first, in
// their order, then the others by name), probe and reason.
func (m *Misses) Entries() []Miss {
	out := slices.Clone(m.entries)
	slices.SortStableFunc(out, func(a, b Miss) int {
		return cmp.Or(cmp.Compare(whatRank(a.What), whatRank(b.What)), cmp.Compare(a.What, b.What),
			cmp.Compare(a.Probe, b.Probe), cmp.Compare(a.Reason, b.Reason))
	})
	return out
}

// Total sums the counted entries of one kind.
func (m *Misses) Total(what string) uint64 {
	var n uint64
	for _, e := range m.entries {
		if e.What == what && !e.Uncounted {
			n += e.Count
		}
	}
	return n
}

// Any reports whether something was missed and counted.
func (m *Misses) Any() bool {
	for _, e := range m.entries {
		if !e.Uncounted && e.Count > 0 {
			return true
		}
	}
	return false
}

func whatRank(w string) int {
	switch w {
	case MissProgramsSkipped:
		return 0
	case MissEventsLost:
		return 1
	case MissFunctionsSkipped:
		return 2
	case MissCapturesTruncated:
		return 3
	}
	return 4
}

// missState is what the session keeps for Misses: the readers added, the
// programs' counters as read before their links closed, and -w's frames
// cut short (counted by the printer).
type missState struct {
	mu        sync.Mutex
	readers   []MissReader
	final     *Misses
	truncated atomic.Uint64
}

// AddMisses adds a reader of another part's misses: Misses calls it each
// time, after the session's own.
func (s *Session) AddMisses(r MissReader) {
	s.misses.mu.Lock()
	defer s.misses.mu.Unlock()
	s.misses.readers = append(s.misses.readers, r)
}

// Misses reads what skbtrace did not see so far: runs of its programs the
// kernel skipped, records lost, functions skipped at attach, captures
// truncated, and what the readers added say. Safe to call while tracing
// (a metrics scrape, -v's intervals) and after Detach, which keeps the
// programs' last counts.
func (s *Session) Misses() *Misses {
	m := &Misses{}
	s.misses.mu.Lock()
	final, readers := s.misses.final, slices.Clone(s.misses.readers)
	s.misses.mu.Unlock()
	if final != nil {
		m.Merge(final)
	} else {
		s.readProgramMisses(m)
	}
	if n, buffer := s.Lost(); n > 0 {
		m.Add(Miss{What: MissEventsLost, Reason: "the " + buffer + " was full", Count: n})
	}
	if st := s.FuncStats(); st != nil {
		for r, fns := range st.Skipped {
			m.Add(Miss{What: MissFunctionsSkipped, Reason: r, Count: uint64(len(fns)), Detail: fns})
		}
	}
	if n := s.misses.truncated.Load(); n > 0 {
		m.Add(Miss{What: MissCapturesTruncated, Reason: "longer than the snap length", Count: n})
	}
	for _, r := range readers {
		r(m)
	}
	return m
}

// keepProgramMisses reads the programs' counters once more before their
// links close (Detach): Misses returns these from then on.
func (s *Session) keepProgramMisses() {
	m := &Misses{}
	s.readProgramMisses(m)
	s.misses.mu.Lock()
	s.misses.final = m
	s.misses.mu.Unlock()
}
