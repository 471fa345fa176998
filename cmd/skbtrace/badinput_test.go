package main

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/internal/golden"
	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/runtime/pipeline"
	"github.com/skbtrace/skbtrace/runtime/session"
)

// corpusArgs reads a script's positional arguments from a first line
// `// args: A B`; none without it.
func corpusArgs(text string) []string {
	first, _, _ := strings.Cut(text, "\n")
	if rest, ok := strings.CutPrefix(first, "// args:"); ok {
		return strings.Fields(rest)
	}
	return nil
}

// prepareCorpus takes a script through everything but attaching, as
// skbtrace does (pipeline.Prepare): parse, check against this kernel's
// types and prune, skb: globs resolved, code generation
// and, when all that passed, the verifier.
func prepareCorpus(t *testing.T, file string) error {
	t.Helper()
	text, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	src := &lang.Source{Name: filepath.Base(file), Text: string(text)}
	plan, err := pipeline.Prepare(pipeline.Config{Params: corpusArgs(string(text)), Backend: "auto", Events: "auto", Snaplen: codegen.DefaultSnaplen}, src)
	defer plan.Close()
	if err != nil {
		return err
	}
	out := plan.Output
	coll, err := session.Load(out, false)
	if err != nil {
		return err
	}
	coll.Close()
	return nil
}

// positioned is how every error of the corpus starts: FILE:LINE:COL.
var positioned = regexp.MustCompile(`^[\w.-]+\.st:\d+:\d+: `)

// TestBadInputCorpus runs every testdata/bad/*.st: each is rejected with
// exactly the positioned errors (line, caret, hint) of its .err golden
// file, never a panic or an error without a place. Every
// testdata/good/*.st, hostile but valid, is accepted and loads.
func TestBadInputCorpus(t *testing.T) {
	bad, _ := filepath.Glob("testdata/bad/*.st")
	if len(bad) < 150 {
		t.Fatalf("only %d bad scripts; the corpus has at least 150", len(bad))
	}
	for _, file := range bad {
		t.Run(filepath.Base(file), func(t *testing.T) {
			err := func() (err error) {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("panic: %v", p)
					}
				}()
				return prepareCorpus(t, file)
			}()
			if err == nil {
				t.Fatal("accepted a bad script")
			}
			var d *lang.Diagnostics
			if !errors.As(err, &d) || !positioned.MatchString(d.Error()) {
				t.Fatalf("not a positioned error: %v", err)
			}
			golden.Compare(t, strings.TrimSuffix(file, ".st")+".err", []byte(d.Error()))
		})
	}
	good, _ := filepath.Glob("testdata/good/*.st")
	for _, file := range good {
		t.Run(filepath.Base(file), func(t *testing.T) {
			if err := prepareCorpus(t, file); err != nil {
				t.Errorf("rejected:\n%v", err)
			}
		})
	}
}
