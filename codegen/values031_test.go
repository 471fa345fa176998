package codegen_test

import "testing"

// TestValues031Run runs bpftrace's tuple and struct values in the
// kernel, in a begin probe, and checks what they computed in @r.
func TestValues031Run(t *testing.T) {
	cases := []struct {
		name, script string
		want         int64
	}{
		// $t[N] is $t.N: integers, strings and nested tuples.
		{"tuple index", `begin { $t = (1, "ab", (3, 40)); @r = $t[0] * 100 + $t[2][1] + ($t[1] == "ab") * 1000 + (1, 7)[2 - 1] * 10000 }`, 71140},
		{"tuple index of a map value", `begin { @t = (5, 6); $u = @t; @r = $u[1] }`, 6},
		// () does nothing, as a statement and a macro's value.
		{"empty tuple", `macro nothing() { () } begin { (); nothing(); @r = 3 }`, 3},
		// A struct value is its bytes: members read from the copy are
		// those read through the pointer.
		{"struct copy", `struct S { int a; int b; char c[6]; } begin { $p = (struct S *)curtask; $s = *$p; @r = $s.a == $p->a && $s.b == $p->b && $s.c[5] == $p->c[5] }`, 1},
		{"struct member value", `begin { $l = curtask.se.load; @r = $l.weight == curtask.se.load.weight && $l.inv_weight == curtask.se.load.inv_weight }`, 1},
		{"struct map value", `begin { @m[1] = curtask.se.load; @r = @m[1].weight == curtask.se.load.weight }`, 1},
		{"struct through a dereference", `struct S { long a; long b; } begin { $p = (struct S *)curtask; @r = (*$p).b == $p->b }`, 1},
		// packed puts each member at the next byte.
		{"packed member", `struct P { char c; int x; } __attribute__((packed)); begin { $p = (struct P *)curtask; $b = (uint8 *)curtask; @r = $p->x == *(int32 *)($b + 1) && sizeof(struct P) == 5 }`, 1},
		{"aligned size", `struct A { char c; } __attribute__((aligned(8))); begin { @r = sizeof(struct A) }`, 8},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			coll := runBegin(t, c.script)
			t.Cleanup(coll.Close)
			if got := keyless(t, coll, "r"); got != c.want {
				t.Errorf("%s: @r = %d, want %d", c.script, got, c.want)
			}
		})
	}
}

// TestValues031Load loads print(args) and struct values in probes whose
// context differs from begin's: a tracepoint read by BTF, a raw
// tracepoint, a classic tracepoint's record, a kprobe; each through this kernel's verifier.
func TestValues031Load(t *testing.T) {
	for _, script := range []string{
		`tracepoint:sched:sched_process_exec { print(args); $a = args; @m[1] = $a; print(@m[1].old_pid) }`,
		`tracepoint:sched:sched_process_exec { $l = args.p->se.load; print($l); @l[tid] = args.p->se.load; print(*args.p->se.cfs_rq->tasks_timeline.rb_leftmost) }`,
		`rawtracepoint:sys_enter { print(args); print((args, 1)[1]) }`,
		`tracepoint:sched:sched_switch { print(args); $a = args; print($a) }`,
		`kprobe:tcp_v4_rcv { print(args); $a = args; @m[tid] = $a; print((args, 1)[0]); print(args.skb->dev->stats) }`,
	} {
		t.Run(script, func(t *testing.T) {
			load(t, compile(t, script)).Close()
		})
	}
}
