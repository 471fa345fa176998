package codegen_test

import (
	"fmt"
	"testing"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/internal/testkit/compiletest"
	"github.com/skbtrace/skbtrace/runtime/kernel"
	"github.com/skbtrace/skbtrace/scripts"
)

// TestCompileIsDeterministic compiles every bundled tool several times: the
// same script must give the same instructions each time (Go's map order is
// random, so a generator that ranges over a map shows here), or the
// verifier's work, and -d's output, change from run to run.
//
// The tools are compiled as on a host with no BPF packet program loaded
// (whydrop's bpfret: probes then match nothing and are left out, as
// missing_probes = "ignore" says): the runtime, not this test, lists them.
func TestCompileIsDeterministic(t *testing.T) {
	opts := codegen.Options{Ksym: kernel.KsymAddr}
	none := func() ([]check.BPFProg, error) { return nil, nil }
	for _, tool := range scripts.All() {
		var first string
		for i := 0; i < 8; i++ {
			text := ""
			_, out := compiletest.Compile(t, tool.Text, check.Options{Params: []string{"1"}, BPFProgs: none}, opts)
			for _, p := range out.Programs {
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
