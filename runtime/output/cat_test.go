package output

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/stdlib"
)

// TestCatRecord checks what a cat() record prints: the file named by its
// format as it is when the record is printed, up to MaxBytes; JSON as a
// cat object; a file that cannot be opened a warning and nothing printed.
func TestCatRecord(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("hello\nworld\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	event := func(name string, max int) *codegen.Event {
		verbs, err := stdlib.ParseFormat(name)
		if err != nil {
			t.Fatal(err)
		}
		return &codegen.Event{Kind: codegen.EventCat, Verbs: verbs, MaxBytes: max, Size: 8}
	}
	var warned []string
	rec := make([]byte, 8)
	for _, tc := range []struct {
		ev   *codegen.Event
		json bool
		want string
	}{
		{event(file, 100), false, "hello\nworld\n"},
		{event(file, 3), false, "hel"},
		{event(file, 100), true, `{"data":"hello\nworld\n","type":"cat"}` + "\n"},
		{event(file+"-missing", 100), false, ""},
	} {
		p := testPrinter(nil, []*codegen.Event{tc.ev}, tc.json)
		p.warn = func(f string, a ...any) { warned = append(warned, fmt.Sprintf(f, a...)) }
		p.buf = append(p.buf[:0], '>')
		if err := p.record(rec); err != nil {
			t.Fatal(err)
		}
		if got := string(p.buf); got != ">"+tc.want {
			t.Errorf("%s (max %d, json %v): %q, want %q", tc.ev.Verbs[0].Text, tc.ev.MaxBytes, tc.json, got, ">"+tc.want)
		}
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "f-missing") {
		t.Errorf("warnings %q, want one about f-missing", warned)
	}
}
