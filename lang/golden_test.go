package lang_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skbtrace/skbtrace/lang"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestParseGolden parses each testdata/parse/*.st and compares the tree with
// its .tree golden file.
func TestParseGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/parse/*.st")
	if len(files) == 0 {
		t.Fatal("no golden inputs")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			text, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			script, err := lang.Parse(&lang.Source{Name: filepath.Base(file), Text: string(text)})
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			var got bytes.Buffer
			lang.Dump(&got, script)
			compareGolden(t, strings.TrimSuffix(file, ".st")+".tree", got.Bytes())
		})
	}
}

func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
