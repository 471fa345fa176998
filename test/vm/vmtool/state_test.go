package main

import "testing"

// TestKernelStateWithin: a case may end with less than it began with (an
// object of the case before still being freed), never with more.
func TestKernelStateWithin(t *testing.T) {
	before := kernelState{Progs: 1, Maps: 2, EnabledFuncs: 3}
	for _, c := range []struct {
		after kernelState
		ok    bool
	}{
		{before, true},
		{kernelState{Maps: 2, EnabledFuncs: 3}, true},
		{kernelState{}, true},
		{kernelState{Progs: 2, Maps: 2, EnabledFuncs: 3}, false},
		{kernelState{Progs: 1, Maps: 2, EnabledFuncs: 3, Links: 1}, false},
		{kernelState{Kprobes: 1}, false},
	} {
		if got := c.after.within(before); got != c.ok {
			t.Errorf("%v within %v = %v, want %v", c.after, before, got, c.ok)
		}
	}
}
