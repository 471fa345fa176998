package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// corpusEntry is one script of testdata/bpftrace-corpus.txt.
type corpusEntry struct {
	line   int    // of its %% line
	want   string // run, load, or error
	errAt  string // L:C of the expected error
	errMsg string
	script string
}

func readCorpus(t *testing.T) []corpusEntry {
	t.Helper()
	text, err := os.ReadFile("testdata/bpftrace-corpus.txt")
	if err != nil {
		t.Fatal(err)
	}
	var out []corpusEntry
	var cur *corpusEntry
	for i, l := range strings.Split(string(text), "\n") {
		if rest, ok := strings.CutPrefix(l, "%% "); ok {
			out = append(out, corpusEntry{line: i + 1})
			cur = &out[len(out)-1]
			want, arg, _ := strings.Cut(rest, " ")
			cur.want = want
			if want == "error" {
				cur.errAt, cur.errMsg, _ = strings.Cut(arg, " ")
			}
			continue
		}
		if cur != nil {
			cur.script += l + "\n"
		}
	}
	return out
}

// TestBpftraceCorpus runs every script of the corpus: bpftrace's syntax
// for networking, drops, sockets and syscalls runs, or fails with an error
// at its position that names what is not supported.
func TestBpftraceCorpus(t *testing.T) {
	entries := readCorpus(t)
	if len(entries) < 40 {
		t.Fatalf("only %d scripts", len(entries))
	}
	for _, e := range entries {
		t.Run(fmt.Sprintf("line%d", e.line), func(t *testing.T) {
			script := strings.TrimSpace(e.script)
			switch e.want {
			case "run":
				code, _, errs := runCLI(t, "-e", script, "-c", "true")
				if code != 0 {
					t.Errorf("%s\nexit %d: %s", script, code, errs)
				}
			case "load":
				code, dump, errs := runCLI(t, "-d", "-e", script)
				if code != 0 || !strings.Contains(dump, "verifier processed") {
					t.Errorf("%s\ndoes not load: exit %d: %s", script, code, errs)
				}
			case "error":
				code, _, errs := runCLI(t, "-e", script)
				want := "cmdline:" + e.errAt + ": " + e.errMsg
				if code != 1 || !strings.HasPrefix(errs, want) || !strings.Contains(errs, "^") {
					t.Errorf("%s\nwant %q (exit 1), got exit %d:\n%s", script, want, code, errs)
				}
			default:
				t.Fatalf("unknown expectation %q", e.want)
			}
		})
	}
}
