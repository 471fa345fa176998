package session

import (
	"errors"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/runtime/output"
)

// MapEntry is one element of a script's map as ReadMap reads it, its key
// and value formatted as the printer prints them.
type MapEntry struct {
	// Keys are the element's keys, each as the printer prints it but
	// without the names of pods and containers (a netns is its inode):
	// "udp" and "9" for @m[udp, 9]; nil for a keyless map. Their names
	// are the layout's (MapLayout.Keys).
	Keys []string
	// Key is the whole key as the printer prints it: "[udp, 9]"; "" for a
	// keyless map.
	Key string
	// Value is the number the element holds: a count, a sum, a min, a
	// max, an average (bpftrace's integer one), a stats' average, a
	// histogram bucket's count, or a plain integer value (its 64 bits
	// as an int64). 0 for a plain value that is not an integer.
	Value int64
	// Count and Sum are, for avg and stats, how many values were
	// aggregated and their total.
	Count, Sum int64
	// Bucket is, in a histogram, the bucket this element counts
	// (MapLayout.Bucket says which values it holds).
	Bucket int64
	// Text is a plain value as the printer prints it ("" for
	// aggregations): an address, a string, a symbol, a number.
	Text string
}

// NetnsName is the pod, container or ip netns a network namespace is, by
// inode, where the session's names know it (Options.Names).
func (s *Session) NetnsName(inode uint64) (output.Name, bool) { return s.fmt.NetnsName(inode) }

// Maps are the layouts of the script's maps, in the order the script
// names them (codegen.Output.MapLayouts): what ReadMap reads.
func (s *Session) Maps() []*codegen.MapLayout { return s.out.MapLayouts }

// Layout is the layout of the script's map name (without the @), nil if
// it has none of that name.
func (s *Session) Layout(name string) *codegen.MapLayout { return s.out.Layout(name) }

// ReadMap reads one of the script's maps (a layout of the session's
// Output.MapLayouts) as it is now: an entry for each element, each
// bucket of a histogram, in the kernel's order (not sorted). A min or max
// no CPU has set yet is left out, as the printer leaves it. It may be
// called from any goroutine while the session runs, until Close; a map
// changing meanwhile may be read part before, part after the change.
func (s *Session) ReadMap(l *codegen.MapLayout) ([]MapEntry, error) {
	if s.coll == nil {
		return nil, errors.New("read @" + l.Name + ": the session is closed")
	}
	entries, err := s.readMapWith(s.fmt, l, true)
	if err != nil {
		return nil, err
	}
	out := make([]MapEntry, 0, len(entries))
	for _, e := range entries {
		if output.Unset(l)(e) {
			continue
		}
		me := MapEntry{Keys: e.Keys, Key: e.Key, Value: e.Value.N, Bucket: e.Bucket}
		switch l.Kind {
		case codegen.MapAvg, codegen.MapStats:
			me.Count, me.Sum = e.Value.Cnt, e.Value.Sum
		case codegen.MapValue:
			if !output.InRegister(l.Value) {
				me.Value = 0
			}
			me.Text = s.fmt.Value(l.Value, e.Raw)
		}
		out = append(out, me)
	}
	return out, nil
}
