package session

import (
	"maps"
	"slices"
	"testing"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/runtime/kernel"
)

// TestLateMultiSplit links a kprobe-multi skb: program's functions of the
// packet's main path first and the others while tracing, each with the
// cookie that places its skb and reason; only with LateWork, on
// kprobe-multi, where the program has functions of both.
func TestLateMultiSplit(t *testing.T) {
	p := &codegen.Program{Name: "p0_0_skbs", SkbArg: -1, Cookie: true,
		Attach: codegen.Attach{Kind: codegen.AttachSkbFuncs, Glob: "*", Multi: true}}
	fa := &FuncAttach{Backend: BackendKprobeMulti, LateWork: true, Funcs: map[string][]kernel.SkbFunc{"*": {
		{Name: "ip_rcv", SkbArg: 0, ReasonArg: -1},
		{Name: "kfree_skb_reason", SkbArg: 0, ReasonArg: 1},
		{Name: "some_driver_fn", SkbArg: 4, ReasonArg: -1},
		{Name: "other_fn", SkbArg: 9, ReasonArg: -1},
	}}}
	now, later := lateMultiSplit(p, fa)
	want := func(got []multiTarget, want ...multiTarget) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
	}
	want(now, multiTarget{"ip_rcv", codegen.AttachCookie(0, -1)}, multiTarget{"kfree_skb_reason", codegen.AttachCookie(0, 1)})
	want(later, multiTarget{"some_driver_fn", codegen.AttachCookie(4, -1)}, multiTarget{"other_fn", codegen.AttachCookie(9, -1)})
	for _, f := range []func(*FuncAttach){
		func(fa *FuncAttach) { fa.LateWork = false },
		func(fa *FuncAttach) { fa.Backend = BackendKprobe },
		func(fa *FuncAttach) { fa.Funcs["*"] = fa.Funcs["*"][2:] }, // none on the main path
	} {
		c := *fa
		c.Funcs = maps.Clone(fa.Funcs)
		f(&c)
		now, later := lateMultiSplit(p, &c)
		if len(later) != 0 || len(now) != len(c.Funcs["*"]) {
			t.Errorf("%+v: now %v, later %v: want all now", c, now, later)
		}
	}
}

// TestMultiTargetsByPlace: a program for one place of the skb and reason
// attaches to the functions so placed, without cookies.
func TestMultiTargetsByPlace(t *testing.T) {
	p := &codegen.Program{Name: "p0_0_skb0_r1", SkbArg: 0, HasReason: true, ReasonArg: 1,
		Attach: codegen.Attach{Kind: codegen.AttachSkbFuncs, Glob: "*", Multi: true}}
	fa := &FuncAttach{Backend: BackendKprobeMulti, Funcs: map[string][]kernel.SkbFunc{"*": {
		{Name: "ip_rcv", SkbArg: 0, ReasonArg: -1},
		{Name: "kfree_skb_reason", SkbArg: 0, ReasonArg: 1},
	}}}
	if got := multiTargets(p, fa); !slices.Equal(got, []multiTarget{{fn: "kfree_skb_reason"}}) {
		t.Errorf("got %v", got)
	}
}
