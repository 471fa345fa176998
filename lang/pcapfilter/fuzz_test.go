package pcapfilter

import (
	"testing"

	"github.com/skbtrace/skbtrace/internal/pcaptest"
	"github.com/skbtrace/skbtrace/lang"
)

// FuzzCompile feeds arbitrary filters to the compiler: it returns an
// expression or an *Error inside the filter, never panics.
func FuzzCompile(f *testing.F) {
	for _, c := range pcaptest.Corpus {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, filter string) {
		src := &lang.Source{Name: "f", Text: filter}
		x, err := Compile(filter, src.PosAt)
		if err == nil {
			if x == nil {
				t.Fatalf("%q: no expression and no error", filter)
			}
			return
		}
		e, ok := err.(*Error)
		if !ok || e.Off < 0 || e.Off > len(filter) || e.End < e.Off || e.Msg == "" {
			t.Fatalf("%q: bad error %#v", filter, err)
		}
	})
}
