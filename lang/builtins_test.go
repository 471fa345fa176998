package lang

import "testing"

// TestBuiltinCalls checks builtin values called as functions.
func TestBuiltinCalls(t *testing.T) {
	cases := []struct{ sugar, plain string }{
		{`begin { $x = pid() + tid(init) + pid(curr_ns) }`, `begin { $x = pid + tid + pid }`},
		{`begin { $x = nsecs(boot) + nsecs(monotonic) + nsecs(tai) + nsecs(sw_tai) + nsecs() }`, `begin { $x = __nsecs_boot + nsecs + __nsecs_tai + __nsecs_tai + nsecs }`},
		{`begin { print(pcomm); print(pcomm()) }`, `begin { print(curtask->real_parent->comm); print(curtask->real_parent->comm) }`},
		{`begin { print(ppid); print(ppid(curtask)); print((leader_tid, leader_comm())) }`, `begin { print(curtask->real_parent->tgid); print(curtask->real_parent->tgid); print((curtask->group_leader->pid, curtask->group_leader->comm)) }`},
		{`macro pid() { 7 } begin { $x = pid() }`, `begin { $x = 7 }`},
		{`begin { $x = pton("10.0.0.1") == saddr; $y = (uint32)pton("127.0.0.1") }`, `begin { $x = 10.0.0.1 == saddr; $y = 16777343 }`},
		{`begin { $y = (uint64_t)1 + (int8_t)2 }`, `begin { $y = (uint64)1 + (int8)2 }`},
	}
	for _, c := range cases {
		if got, want := treeShape(t, c.sugar), treeShape(t, c.plain); got != want {
			t.Errorf("%s:\n%s\nwant (%s):\n%s", c.sugar, got, c.plain, want)
		}
	}
	for _, bad := range []string{`begin { $x = nsecs(bogus) }`, `begin { $x = pid(other) }`, `begin { $x = pton("nope") }`, `begin { $x = pton($y) }`} {
		if _, err := Parse(&Source{Name: "t.bt", Text: bad}); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
