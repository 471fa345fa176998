package metrics

// Kind is how a map is exported.
type Kind int

const (
	// Skip is a map that cannot be a metric (Map.Why says why).
	Skip Kind = iota
	// Counter is count() and sum(): a value that only adds up.
	Counter
	// Gauge is avg(), min(), max() and a plain integer value.
	Gauge
	// Stats is stats(): a count, a sum and their average.
	Stats
	// Histogram is hist() and lhist().
	Histogram
)

// Map is one of the script's maps as the collector sees it.
type Map struct {
	// Name is the script's name for it, without the @.
	Name string
	Kind Kind
	// Why says, for Skip, what keeps it from being a metric.
	Why string
	// Keys are its key parts' expressions as written: reason, args.saddr;
	// then, where a key is a network namespace (netns), "namespace" and
	// "pod": the labels of the pod it is.
	Keys []string
	// NetnsKey is 1 + the index of the key whose pod the namespace and
	// pod labels name; 0 without one.
	NetnsKey int
	// Bounds, for a histogram, is each bucket's upper bound, by bucket
	// index: the largest integer it holds (the last is +Inf).
	Bounds []float64
}

// Series is one key of a map, read from the kernel.
type Series struct {
	// Labels are the key's parts, formatted as the printer prints them.
	Labels []string
	// Value is a counter's or gauge's value; for Stats, the average.
	Value float64
	// Count and Sum are stats()'s.
	Count uint64
	Sum   float64
	// Buckets are a histogram's counts by bucket index (not cumulative).
	Buckets map[int]uint64
}

// weight is what ranks a series against the others of its map where there
// are more than the collector exports: the largest are kept.
func (s *Series) weight() float64 {
	switch {
	case s.Buckets != nil:
		var n uint64
		for _, c := range s.Buckets {
			n += c
		}
		return float64(n)
	case s.Count > 0:
		return float64(s.Count)
	}
	return s.Value
}

// Source gives the collector the script's maps and reads them.
type Source interface {
	// Maps lists the script's maps, in the order the script names them.
	Maps() []Map
	// Read returns a map's series as they are now in the kernel.
	Read(m Map) ([]Series, error)
}
