package lang_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skbtrace/skbtrace/internal/golden"
	"github.com/skbtrace/skbtrace/lang"
)

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
			golden.Compare(t, strings.TrimSuffix(file, ".st")+".tree", got.Bytes())
		})
	}
}
