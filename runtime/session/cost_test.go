package session

import (
	"strings"
	"testing"
)

// TestPickByCost checks auto's weighing on each kind of kernel the VM suite
// measured (ops: trampolines with ftrace_ops of their own, 6.0 on; 5.10 has
// none): skb:* (some 1,500 functions) with a large program takes kprobes
// where fentry's teardown costs a grace period per trampoline and
// where its loads cost more than kprobes' links (5.10); a handful of
// functions costs little either way, and fentry, cheaper per call, wins;
// kprobe-multi wins wherever it works.
func TestPickByCost(t *testing.T) {
	filter := Shape{Funcs: 1500, Insns: 1264}
	small := Shape{Funcs: 2, Insns: 40}
	for _, tc := range []struct {
		arch  string
		ops   bool
		works []Backend
		shape Shape
		want  Backend
	}{
		{"amd64", true, []Backend{BackendFentry, BackendKprobe}, filter, BackendKprobe},
		{"amd64", false, []Backend{BackendFentry, BackendKprobe}, filter, BackendKprobe},
		{"amd64", true, []Backend{BackendKprobeMulti}, filter, BackendKprobeMulti},
		{"arm64", true, []Backend{BackendFentry, BackendKprobe}, filter, BackendKprobe},
		{"amd64", true, []Backend{BackendFentry, BackendKprobe}, small, BackendFentry},
		{"arm64", true, []Backend{BackendFentry, BackendKprobe}, small, BackendFentry},
		{"amd64", true, []Backend{BackendFentry}, filter, BackendFentry},
	} {
		m := modelFor(tc.arch, tc.ops)
		got, ests := m.pick(tc.works, tc.shape)
		if got != tc.want || len(ests) != len(tc.works) {
			t.Errorf("%s %v %v %+v: picked %s (%v), want %s", tc.arch, tc.ops, tc.works, tc.shape, got, ests, tc.want)
		}
	}
	// The words say the figures and the choice.
	m := modelFor("amd64", true)
	b, ests := m.pick([]Backend{BackendFentry, BackendKprobe}, filter)
	why := describeEstimates(b, filter, ests)
	for _, want := range []string{"1500 functions", "1264 instructions", "fentry about", "kprobe about", "kprobe waits least"} {
		if !strings.Contains(why, want) {
			t.Errorf("%q does not say %q", why, want)
		}
	}
	b, ests = m.pick([]Backend{BackendFentry, BackendKprobe}, small)
	if why := describeEstimates(b, small, ests); !strings.Contains(why, "all within 1s of each other, and fentry costs least a call") {
		t.Errorf("a close call: %q", why)
	}
}
