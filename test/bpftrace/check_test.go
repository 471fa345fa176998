package bpftrace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// check compares what a run printed with the case's expectations; a run
// that timed out passes where they hold, as in bpftrace's runner.
func (c *testCase) check(t *testing.T, res result) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf("%s:%d: %s\ncommand: %s\nexit status: %d (timed out: %v)\nstdout:\n%s\nstderr:\n%s",
			c.file, c.line, fmt.Sprintf(format, args...), res.cmd, res.code, res.timedOut, res.stdout, res.stderr)
	}
	switch {
	case c.hasReturn && res.code != c.returnCode:
		fail("exit status %d, want %d", res.code, c.returnCode)
	case !c.hasReturn && !c.willFail && !res.timedOut && res.code != 0:
		fail("exit status %d", res.code)
	case c.willFail && res.code == 0:
		fail("WILL_FAIL, but it exited 0")
	}
	all := res.both
	for _, e := range c.expects {
		switch e.mode {
		case expectText:
			if !hasLines(all, e.text) {
				fail("no line %q", e.text)
			}
		case expectNone:
			if hasLines(all, e.text) {
				fail("a line %q, where none should be", e.text)
			}
		case expectRegex, expectRegexNone:
			re, err := regexp.Compile("(?m)" + e.text)
			if err != nil {
				t.Fatalf("%s:%d: %v", c.file, c.line, err)
			}
			if found := re.MatchString(all); found != (e.mode == expectRegex) {
				fail("%s %q", e.mode, e.text)
			}
		case expectFile:
			want, err := os.ReadFile(e.text)
			if err != nil {
				t.Fatal(err)
			}
			if got := withoutAttached(res.stdout); got != string(want) {
				fail("stdout differs from %s:\n%s", e.text, want)
			}
		case expectJSON:
			if err := sameJSON(res.stdout, e.text); err != nil {
				fail("%v", err)
			}
		}
	}
}

// hasLines says whether out has want's lines, one after another, each
// equal to one of out's lines but for blanks at either end.
func hasLines(out, want string) bool {
	lines := strings.Split(out, "\n")
	wl := strings.Split(want, "\n")
	for i := 0; i+len(wl) <= len(lines); i++ {
		ok := true
		for j, w := range wl {
			if strings.TrimSpace(lines[i+j]) != strings.TrimSpace(w) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// withoutAttached is stdout without bpftrace's "Attached N probes" line,
// which EXPECT_FILE leaves out as bpftrace's runner does.
func withoutAttached(s string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if strings.HasPrefix(l, "Attached ") && strings.Contains(l, " probe") {
			continue
		}
		b.WriteString(l)
	}
	return b.String()
}

// sameJSON compares the JSON objects on stdout, one a line, with the
// file's (one a line, or one document), as values: spacing and key order
// aside. attached_probes lines are left out of both.
func sameJSON(stdout, file string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	got, err := jsonValues([]byte(stdout))
	if err != nil {
		return fmt.Errorf("stdout: %v", err)
	}
	want, err := jsonValues(b)
	if err != nil {
		return fmt.Errorf("%s: %v", file, err)
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		return fmt.Errorf("JSON differs from %s:\n got %s\nwant %s", file, g, w)
	}
	return nil
}

// jsonValues decodes a stream of JSON values, leaving out attached_probes.
func jsonValues(b []byte) ([]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var vals []any
	for dec.More() {
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if m, ok := v.(map[string]any); ok && m["type"] == "attached_probes" {
			continue
		}
		vals = append(vals, v)
	}
	return vals, nil
}
