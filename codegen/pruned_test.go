package codegen_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/internal/testkit"
	"github.com/skbtrace/skbtrace/lang"
)

// TestCompileWantsPruned checks that a script with has() decided by the
// checker compiles only as check.Prune returns it: as checked, an error
// that says so (not a has() the code generator does not know); pruned,
// its programs, the branch has() takes alone loaded into the kernel.
func TestCompileWantsPruned(t *testing.T) {
	s, err := lang.Parse(&lang.Source{Name: "has.st", Text: `tracepoint:net:net_dev_queue /has("tracepoint:net:net_dev_queue") && len > 1/ {
	if (has(args.no_such_arg_skbtrace)) { print(args.no_such_arg_skbtrace) } else { @n = count() }
}`})
	if err != nil {
		t.Fatal(err)
	}
	opts := check.Options{BTF: testkit.KernelBTF(t)}
	info, err := check.Check(s, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := codegen.Compile(s, info, codegen.Options{}); err == nil || !strings.Contains(err.Error(), "check.Prune") {
		t.Errorf("compiled the script as checked, has() in it (%v); want an error naming check.Prune", err)
	}
	pruned, pinfo, err := check.Prune(s, info, opts)
	if err != nil {
		t.Fatal(err)
	}
	out, err := codegen.Compile(pruned, pinfo, codegen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Programs) != 1 || !slices.Equal(pinfo.MapOrder, []string{"n"}) {
		t.Errorf("%d programs, maps %q: want one program counting @n", len(out.Programs), pinfo.MapOrder)
	}
	load(t, out)
}
