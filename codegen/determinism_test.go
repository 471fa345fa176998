package codegen_test

import (
	"fmt"
	"testing"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/runtime/kernel"
	"github.com/skbtrace/skbtrace/scripts"
)

// TestCompileIsDeterministic compiles every bundled tool several times: the
// same script must give the same instructions each time (Go's map order is
// random, so a generator that ranges over a map shows here), or the
// verifier's work, and -d's output, change from run to run.
func TestCompileIsDeterministic(t *testing.T) {
	opts := codegen.Options{Ksym: kernel.KsymAddr}
	for _, tool := range scripts.All() {
		var first string
		for i := 0; i < 8; i++ {
			text := ""
			for _, p := range compileArgs(t, tool.Text, []string{"1"}, opts).Programs {
				text += fmt.Sprintf("%s\n%v", p.Name, p.Prog.Instructions)
			}
			if i == 0 {
				first = text
			} else if text != first {
				t.Fatalf("%s: compile %d differs from the first", tool.Name, i+1)
			}
		}
	}
}
