package codegen_test

import (
	"testing"

	"github.com/skbtrace/skbtrace/codegen"
)

// TestLang026Run runs bpftrace 0.26's language in the kernel, in a begin
// probe, and checks the value it left in @r: each case is bpftrace's
// documented semantics of one construct.
func TestLang026Run(t *testing.T) {
	cases := []struct {
		name, script string
		want         int64
	}{
		// exit() ends the action at once: what follows it does not run.
		{"exit stops the probe", `begin { @r = 1; exit(); @r = 2 }`, 1},
		{"exit in a branch", `begin { @r = 1; if (@r == 1) { exit() } @r = 3 }`, 1},
		// Durations are nanoseconds; _ separates digits; C suffixes.
		{"durations", `begin { @r = 1m + 100ms + 2us + 3ns + 1_000 + 7UL }`, 60e9 + 100e6 + 2000 + 3 + 1000 + 7},
		// ++ and -- inside expressions: x++ is the old value, ++x the new.
		{"postfix", `begin { $x = 10; $y = $x--; @r = $y * 100 + $x }`, 1009},
		{"prefix", `begin { $a = 10; $b = --$a; @r = $b * 100 + $a }`, 909},
		{"map postfix", `begin { @m[1]++; $f = @m[1]++; @r = $f * 10 + @m[1] }`, 12},
		// Block expressions: the statements run, the last expression is the value.
		{"block expression", `begin { let $a = { let $b = 1; $b + 5 }; @r = $a }`, 6},
		{"if expression", `begin { $c = 6; @r = if ($c > 3) { 7 } else { 8 } }`, 7},
		{"else if expression", `begin { $c = 2; @r = if ($c > 3) { 7 } else if ($c > 1) { 8 } else { 9 } }`, 8},
		{"block in a branch not taken", `begin { $a = 5; $g = $a > 100 && ({ $a = 1; 1 }); @r = $a }`, 5},
		{"block in a branch taken", `begin { $a = 5; $g = $a < 100 && ({ $a = 1; 1 }); @r = $a + $g * 10 }`, 11},
		{"ternary with blocks", `begin { $a = 1; @r = $a ? { $a = 40; $a + 2 } : 0 }`, 42},
		{"ternary statement", `begin { $c = 6; $c == 6 ? { @r = 1 } : { @r = 2 } }`, 1},
		{"block statement", `begin { { @r = 3 } }`, 3},
		{"bool cast", `begin { @r = (bool)5 == true }`, 1},
		{"bool cast of strings and pointers", `begin { $a = (int64 *)0; $s = "hello"; @r = (bool)$s * 1000 + (bool)"" * 100 + (bool)$a * 10 + (bool)curtask + (int64)true * 10000 }`, 11001},
		{"bool cast of a count", `begin { @a = count(); @b = sum(0); @r = (bool)@a * 10 + (bool)@b }`, 10},
		// Macros: expressions, variables and maps passed in; hygiene.
		{"macros", `macro add_one(x) { x + 1 } macro inc($a, @b) { $a += 1; @b += 1; } macro once(x) { let $x = x; $x + 1 }
begin { $a = 10; @b = 5; inc($a, @b); $x = 100; @r = add_one($a) * 1000 + @b * 10 + once($x) - $x }`, 12061},
		// C types the script defines, read through a cast as the kernel's
		// own bytes are read through an integer pointer.
		{"struct member array", `struct Foo { int a; char b[10]; } begin { $f = (struct Foo *)curtask; $p = (uint8 *)curtask; @r = $f->b[2] == $p[6] && $f->a == *(int32 *)$p }`, 1},
		{"enum", `enum { A = 1, B, C = 10 } enum E { X = -2, Y } begin { @r = A * 100 + B * 10 + C + X + Y }`, 127},
		{"sizeof a struct", `struct S { char c; long l; int i; } begin { @r = sizeof(struct S) }`, 24},
		// Builtins: called with (), clocks, cgroup, numaid, jiffies, pcomm.
		{"builtin calls", `begin { @r = pid() == pid && tid(init) == tid && comm() == comm && leader_comm == comm }`, 1},
		{"clocks", `begin { $m = nsecs(monotonic); @r = nsecs(boot) + 1000000000 > $m && nsecs(tai) > $m && jiffies > 0 && cgroup > 0 && numaid >= 0 && ncpus > 0 }`, 1},
		// has_key and delete's value: whether the element was there.
		{"has_key", `begin { @b[1, 2] = 3; @r = has_key(@b, (1, 2)) * 10 + has_key(@b, (1, 3)) }`, 10},
		{"delete returns whether it deleted", `begin { @a[1] = 1; $d = delete(@a, 1); $e = delete(@a, 1); @r = $d * 10 + $e + has_key(@a, 1) * 100 }`, 10},
		// strcontains, strerror, signal_name, pton.
		{"strcontains", `begin { @r = strcontains("hello world", "o w") * 100 + strcontains("hello", "lol") * 10 + strcontains("ab", "") }`, 101},
		{"strerror and signal_name", `begin { @r = (strerror(1) == "Operation not permitted") * 10 + (signal_name(9) == "SIGKILL") }`, 11},
		{"strerror and signal_name of run-time values", `begin { $e = -13; $s = 9; @r = (strerror($e) == "Permission denied") * 10 + (signal_name($s) == "SIGKILL") }`, 11},
		{"pton", `begin { @r = (uint32)pton("127.0.0.1") }`, 0x0100007f},
		// Division by a zero known only when the probe runs is 1, as bpftrace's.
		{"division by zero", `begin { $z = 0; @r = 10 / $z * 10 + 7 % $z }`, 11},
		{"assert holds", `begin { assert(1 == 1, "fine"); @r = 5 }`, 5},
		{"assert fails and ends the probe", `begin { @r = 1; assert(1 == 2, "bad"); @r = 2 }`, 1},
		// Array casts: an integer's bytes as an array, and back.
		{"array cast", `begin { $a = (int8[8])12345; @r = $a[0] * 1000 + $a[1] }`, 0x39*1000 + 0x30},
		{"array cast back", `begin { $a = (int8[8])12345; $b = (uint8[4])0x01020304; @r = (uint64)$a * 100000000000 + (uint32)$b }`, 12345*100000000000 + 0x01020304},
		{"array cast of no size", `begin { $c = (int8[])-2; $i = 7; @r = $c[0] * 10 + $c[$i] }`, -21},
		{"usermode in begin and __builtin_", `begin { @r = usermode * 10 + (__builtin_pid == pid()) }`, 11},
		{"macro $ parameter of an expression", `macro add_one($x) { $x + 1 } begin { $a = 1; @r = add_one($a + 1) * 10 + add_one(5) }`, 36},
		{"array member into a variable", `struct A { int x[4]; } begin { $p = (struct A *)curtask; $a = $p->x; @r = $a[1] == $p->x[1] && $a[3] == *((int32 *)curtask + 3) }`, 1},
		// Integers through pointers: *p, p[i], p + n (n elements on).
		{"pointer arithmetic", `begin { $p = (uint8 *)curtask; $q = (int32 *)$p; @r = *($q + 1) == $q[1] && *($p + 5) == $p[5] && (uint64)($q + 2) - (uint64)$q == 8 }`, 1},
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

// TestMapFullWarning checks that an update of a declared map that fails
// (the map full) sends bpftrace's warning, and an undeclared map's none.
func TestMapFullWarning(t *testing.T) {
	warns := func(text string) bool {
		out := compile(t, text)
		for _, ev := range out.Events {
			if len(ev.Verbs) == 1 && ev.Verbs[0].Text == codegen.MapFullWarning+"\n" {
				return true
			}
		}
		return false
	}
	if !warns(`let @a = hash(1); begin { @a[1] = 1; @a[2] = 2 }`) {
		t.Error("a declared map's update has no warning")
	}
	if !warns(`let @a = percpuhash(1); begin { @a[1] = count(); @a[2] = count() }`) {
		t.Error("a declared per-CPU map's count() has no warning")
	}
	if warns(`begin { @a[1] = 1; @a[2] = 2 }`) {
		t.Error("an undeclared map's update warns")
	}
	coll := runBegin(t, `let @a = hash(1); begin { @a[1] = 1; @a[2] = 2; @r = 1 }`)
	coll.Close()
}
