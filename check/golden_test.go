package check_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/internal/golden"
	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/runtime/kernel"
)

// parseAndCheck parses and checks a file, then prunes it (check.Prune):
// the script and Info returned are those the code generator gets.
func parseAndCheck(t *testing.T, file string) (*lang.Script, *check.Info, error) {
	t.Helper()
	text, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	script, err := lang.Parse(&lang.Source{Name: filepath.Base(file), Text: string(text)})
	if err != nil {
		return script, nil, err
	}
	opts := check.Options{BTF: kernelBTF(t), Params: []string{"64", "eth0"}, MatchTracepoints: kernel.MatchTracepoints}
	info, err := check.Check(script, opts)
	if err != nil {
		return script, info, err
	}
	return check.Prune(script, info, opts)
}

// TestBadScripts checks that each testdata/bad/*.st is rejected with exactly
// the diagnostics of its .err golden file.
func TestBadScripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/bad/*.st")
	if len(files) < 40 {
		t.Fatalf("only %d bad scripts", len(files))
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			_, _, err := parseAndCheck(t, file)
			if err == nil {
				t.Fatal("accepted a bad script")
			}
			var d *lang.Diagnostics
			if !errors.As(err, &d) {
				t.Fatalf("not a diagnostic: %v", err)
			}
			golden.Compare(t, strings.TrimSuffix(file, ".st")+".err", []byte(d.Error()))
		})
	}
}

// TestGoodScripts checks that each testdata/good/*.st is accepted, and that
// the types and bindings the checker recorded match the .types golden file.
func TestGoodScripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/good/*.st")
	if len(files) == 0 {
		t.Fatal("no good scripts")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			script, info, err := parseAndCheck(t, file)
			if err != nil {
				t.Fatalf("rejected:\n%v", err)
			}
			var got bytes.Buffer
			lang.DumpWith(&got, script, info.Describe)
			golden.Compare(t, strings.TrimSuffix(file, ".st")+".types", got.Bytes())
		})
	}
}
