package session

import (
	"maps"
	"slices"
	"testing"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/runtime/kernel"
)

// TestLateVariants leaves out of the start the kprobe-multi programs
// whose functions are none on the packet's main path, and only with
// LateWork, on kprobe-multi, and where some program holds the main path.
func TestLateVariants(t *testing.T) {
	prog := func(name string, skbArg int) *codegen.Program {
		return &codegen.Program{Name: name, SkbArg: skbArg, ReasonArg: -1,
			Attach: codegen.Attach{Kind: codegen.AttachSkbFuncs, Glob: "*", Multi: true}}
	}
	out := &codegen.Output{Programs: []*codegen.Program{prog("arg0", 0), prog("arg2", 2), prog("arg4", 4), prog("arg5", 5)}}
	fa := &FuncAttach{Backend: BackendKprobeMulti, LateWork: true, Funcs: map[string][]kernel.SkbFunc{"*": {
		{Name: "ip_rcv", SkbArg: 0, ReasonArg: -1},
		{Name: "ip_output", SkbArg: 2, ReasonArg: -1},
		{Name: "some_driver_fn", SkbArg: 4, ReasonArg: -1},
		{Name: "other_fn", SkbArg: 5, ReasonArg: -1},
	}}}
	if got := slices.Sorted(maps.Keys(lateVariants(out, fa))); !slices.Equal(got, []string{"arg4", "arg5"}) {
		t.Errorf("late: %v, want [arg4 arg5]", got)
	}
	for _, f := range []func(*FuncAttach){
		func(fa *FuncAttach) { fa.LateWork = false },
		func(fa *FuncAttach) { fa.Backend = BackendKprobe },
		func(fa *FuncAttach) { fa.Funcs["*"] = fa.Funcs["*"][2:] }, // no program holds the main path
	} {
		c := *fa
		c.Funcs = maps.Clone(fa.Funcs)
		f(&c)
		if got := lateVariants(out, &c); got != nil {
			t.Errorf("%+v: late %v, want none", c, got)
		}
	}
}
