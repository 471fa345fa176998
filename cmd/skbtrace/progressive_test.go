package main

import (
	"strings"
	"testing"
)

// TestProgressiveFlag: --progressive takes auto, true or false (bare, true),
// and anything else is one line and exit 1 before anything loads; where no
// function backend attaches (this host's tracepoint fallback) it changes
// nothing, and the script runs.
func TestProgressiveFlag(t *testing.T) {
	code, _, stderr := runCLI(t, "--progressive=maybe", "-e", "BEGIN { exit() }")
	if code != 1 || strings.TrimSpace(stderr) != `skbtrace: --progressive takes auto, true or false, not "maybe"` {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	for _, v := range []string{"--progressive", "--progressive=false", "--progressive=auto"} {
		code, stdout, stderr := runCLI(t, v, "-e", `BEGIN { printf("ran\n"); exit() }`)
		if code != 0 || !strings.Contains(stdout, "ran") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", v, code, stdout, stderr)
		}
	}
}
