package bpftrace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestParseFile reads a topic file's directives, continuation lines and
// comments, and refuses the cases bpftrace's parser refuses.
func TestParseFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases, err := parseFile(write("ok", `# a comment
NAME two lines
PROG begin { printf("a\n");
     printf("b\n"); exit() }
EXPECT a
       b
TIMEOUT 2

NAME json
RUN {{BPFTRACE}} -f json -e 'begin { @ = 1 }'
EXPECT_JSON outputs/x.json
AFTER echo hi
WILL_FAIL
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 2 {
		t.Fatalf("%d cases, want 2", len(cases))
	}
	c := cases[0]
	if c.prog != "begin { printf(\"a\\n\");\nprintf(\"b\\n\"); exit() }" || c.expects[0].text != "a\nb" || c.timeout != 2*time.Second {
		t.Errorf("first case: %+v", c)
	}
	if c := cases[1]; c.after != "echo hi" || !c.willFail || c.expects[0].mode != expectJSON || c.timeout != defaultTimeout {
		t.Errorf("second case: %+v", c)
	}
	for _, bad := range []struct{ src, want string }{
		{"NAME x\nEXPECT 1\n", "needs PROG or RUN"},
		{"NAME x\nPROG a\nRUN b\nEXPECT 1\n", "both PROG and RUN"},
		{"NAME x\nPROG a\n", "expects nothing"},
		{"NAME x\nPROG a\nEXPECT 1\nEXPECT_JSON f\n", "stand alone"},
		{"NAME x\nPROG a\nEXPECT 1\nFOO 1\n", "unknown directive"},
		{"PROG a\nEXPECT 1\n", "needs a NAME"},
	} {
		_, err := parseFile(write("bad", bad.src))
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: %v, want an error saying %q", bad.src, err, bad.want)
		}
	}
}

// TestHasLines matches whole lines, blanks at either end aside, and
// consecutive lines for a multi-line EXPECT.
func TestHasLines(t *testing.T) {
	out := "Attached 1 probe\n@: 1  \n@x: 2\n"
	for want, ok := range map[string]bool{"@: 1": true, "@: 1\n@x: 2": true, "@x: 2\n@: 1": false, "@": false, "1": false} {
		if hasLines(out, want) != ok {
			t.Errorf("hasLines(%q) = %v", want, !ok)
		}
	}
}
