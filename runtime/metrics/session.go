package metrics

import (
	"fmt"
	"math"
	"strconv"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/lang/types"
	"github.com/skbtrace/skbtrace/runtime/session"
)

// sessionSource reads a running session's maps.
type sessionSource struct {
	sess *session.Session
}

// SessionSource is the Source of a running session's maps.
func SessionSource(sess *session.Session) Source { return sessionSource{sess} }

func (s sessionSource) Maps() []Map {
	var out []Map
	for _, l := range s.sess.Maps() {
		out = append(out, describe(l))
	}
	return out
}

// describe says how a map is exported, or why it is not.
func describe(l *codegen.MapLayout) Map {
	m := Map{Name: l.Name}
	for i, k := range l.Keys {
		m.Keys = append(m.Keys, k.Name)
		if m.NetnsKey == 0 && k.Type.Kind == types.Int && k.Type.Fmt == types.FmtNetns {
			m.NetnsKey = i + 1
		}
	}
	if m.NetnsKey > 0 {
		// The pod's labels: a namespace has one pod, so they add no
		// series, and --metrics-max-series bounds them as before.
		m.Keys = append(m.Keys, "namespace", "pod")
	}
	for _, k := range l.Keys {
		switch k.Type.Kind {
		case types.Stack:
			m.Why = "its key " + k.Name + " is a stack, which cannot be a label"
			return m
		case types.Packet:
			m.Why = "its key " + k.Name + " is a packet, which cannot be a label"
			return m
		}
	}
	switch l.Kind {
	case codegen.MapValue:
		if l.Value.Kind == types.Int {
			m.Kind = Gauge
		} else {
			m.Why = "its values are not numbers"
		}
	case codegen.MapCount, codegen.MapSum:
		m.Kind = Counter
	case codegen.MapStats:
		m.Kind = Stats
	case codegen.MapHist, codegen.MapLhist:
		m.Kind = Histogram
		m.Bounds = bounds(l)
	default:
		m.Kind = Gauge
	}
	return m
}

// bounds are a histogram's buckets' largest values, by bucket index, the
// last +Inf: the values are integers, so bucket [lo, hi) (the layout's
// Bucket) holds at most hi-1. hist's buckets: negative, 0, 1, then
// [2^(i-2), 2^(i-1)); lhist's: below min, each step, then max and above.
func bounds(l *codegen.MapLayout) []float64 {
	var out []float64
	for i := int64(0); ; i++ {
		if _, hi := l.Bucket(i); hi != math.MaxInt64 {
			out = append(out, float64(hi-1))
			continue
		}
		return append(out, math.Inf(1))
	}
}

func (s sessionSource) Read(m Map) ([]Series, error) {
	l := s.sess.Layout(m.Name)
	if l == nil {
		return nil, fmt.Errorf("no map @%s", m.Name)
	}
	entries, err := s.sess.ReadMap(l)
	if err != nil {
		return nil, err
	}
	if m.NetnsKey > 0 {
		for i, e := range entries {
			entries[i].Keys = append(e.Keys, s.podLabels(e.Keys[m.NetnsKey-1])...)
		}
	}
	if m.Kind != Histogram {
		out := make([]Series, 0, len(entries))
		for _, e := range entries {
			out = append(out, Series{Labels: e.Keys, Value: float64(e.Value), Count: uint64(e.Count), Sum: float64(e.Sum)})
		}
		return out, nil
	}
	// A histogram's elements are one for each key and bucket.
	var out []Series
	at := map[string]int{}
	for _, e := range entries {
		k := labelKey(e.Keys)
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, Series{Labels: e.Keys, Buckets: map[int]uint64{}})
		}
		out[i].Buckets[int(e.Bucket)] += uint64(e.Value)
	}
	return out, nil
}

// podLabels are the namespace and pod labels of a netns key's value: the
// pod's, or empty where the namespace is no pod's (or not known yet).
func (s sessionSource) podLabels(netns string) []string {
	inode, err := strconv.ParseUint(netns, 10, 64)
	if err != nil {
		return []string{"", ""}
	}
	n, _ := s.sess.NetnsName(inode)
	return []string{n.Namespace, n.Pod}
}

// labelKey joins label values into one string no two label sets share.
func labelKey(labels []string) string {
	n := 0
	for _, l := range labels {
		n += len(l) + 1
	}
	b := make([]byte, 0, n)
	for _, l := range labels {
		b = append(b, l...)
		b = append(b, 0)
	}
	return string(b)
}
