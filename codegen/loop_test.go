package codegen_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/internal/testkit/compiletest"
	"github.com/skbtrace/skbtrace/lang"
)

// runBegin compiles a script of one BEGIN probe, loads it and runs it
// once, as the runtime runs BEGIN; it returns the maps it wrote.
func runBegin(t *testing.T, text string) *ebpf.Collection {
	t.Helper()
	out := compile(t, text)
	coll := load(t, out)
	prog := coll.Programs[out.Programs[0].Name]
	if _, err := prog.Run(&ebpf.RunOptions{Context: make([]uint64, 1)}); err != nil {
		t.Fatalf("run: %v", err)
	}
	return coll
}

// keyless reads the int64 value of a keyless map of the script.
func keyless(t *testing.T, coll *ebpf.Collection, name string) int64 {
	t.Helper()
	var v int64
	if err := coll.Maps[codegen.MapName(name)].Lookup(uint64(0), &v); err != nil {
		t.Fatalf("@%s: %v", name, err)
	}
	return v
}

// TestLoopsRun runs for loops and tuples in the kernel and checks what
// they computed: map loops over plain values, two keys and per-CPU
// aggregations, ranges in the program and with bpf_loop, break and
// continue, nesting, and tuples in variables and as map keys.
func TestLoopsRun(t *testing.T) {
	cases := []struct {
		name, body string
		want       int64
	}{
		{"map", `@m[1] = 10; @m[2] = 20; @m[3] = 30; for ($kv : @m) { $s += $kv.0 * $kv.1 }`, 140},
		{"two keys", `@m[1, 2] = 3; @m[4, 5] = 6; for ($kv : @m) { $s += $kv.0.0 + $kv.0.1 * 10 + $kv.1 * 100 }`, 975},
		{"count", `@c[7] = count(); @c[7] = count(); @c[8] = count(); for ($kv : @c) { $s += $kv.0 * $kv.1 }`, 22},
		{"avg", `@a[1] = avg(10); @a[1] = avg(21); for ($kv : @a) { $s = $kv.1 }`, 15},
		{"negative avg", `@a[1] = avg(-10); @a[1] = avg(-21); for ($kv : @a) { $s = $kv.1 }`, -15},
		{"max", `@x[1] = max(5); @x[1] = max(9); @x[1] = max(2); for ($kv : @x) { $s = $kv.1 }`, 9},
		{"string key", `@m["ab"] = 1; @m["cd"] = 2; for ($kv : @m) { if ($kv.0 == "cd") { $s = $kv.1 } }`, 2},
		{"break", `@m[1] = 1; @m[2] = 2; @m[3] = 3; for ($kv : @m) { $s += 1; break }`, 1},
		{"continue", `@m[1] = 1; @m[2] = 2; for ($kv : @m) { if ($kv.0 == 1) { continue } $s += $kv.1 }`, 2},
		{"range", `for ($i : 0..5) { $s += $i }`, 10},
		{"range jumps", `for ($i : 0..10) { if ($i == 3) { continue } if ($i == 6) { break } $s += $i }`, 12},
		{"bpf_loop", `$n = 10; for ($i : 2..$n) { if ($i == 3) { continue } if ($i == 6) { break } $s += $i }`, 11},
		{"negative start", `$a = -3; for ($i : $a..3) { $s += $i }`, -3},
		{"no turn", `$n = 0; for ($i : 5..$n) { $s += 1 } for ($j : 5..5) { $s += 1 }`, 0},
		{"nested", `@m[1] = 1; @m[2] = 2; $n = 3; for ($i : 0..$n) { for ($kv : @m) { for ($j : 0..2) { $s += $kv.1 } } }`, 18},
		{"body variable", `@m[1] = 4; for ($kv : @m) { $t = $kv.1 * 2 } $s = $t`, 8},
		{"tuple", `$t = (1, "ab", (3, 4)); $s = $t.0 + $t.2.1`, 5},
		{"record", `$r = (a=1, b=(c=5,)); $s = $r.a + $r.b.0`, 6},
		{"spread key", `$k = (1, 2); @x[$k] = 7; $s = @x[1, 2]; delete(@x, $k); $s += @x[1, 2] * 10`, 7},
		{"widened", `$t = ("a", 1); $t = ("longer string", 2); @w[$t.0] = $t.1; $s = @w["longer string"]`, 2},
		{"tuple value", `@v[1] = ("x", 5); @v[2] = ("y", 6); for ($kv : @v) { $s += $kv.1.1 }`, 11},
		{"while", `$i = 0; while ($i < 5) { $i++; if ($i == 2) { continue } $s += $i }`, 13},
		{"while break", `while (1) { $s++; if ($s == 7) { break } }`, 7},
		{"unroll", `unroll(3) { $s += 2 }`, 6},
		// return ends the action: @r keeps what the body set.
		{"return", `@r = 7; if ($s == 0) { return } $s = 999`, 7},
		{"return in a map loop", `@m[1] = 1; @m[2] = 2; @m[3] = 3; for ($kv : @m) { if ($kv.0 == 2) { @r = 100; return } } $s = 999`, 100},
		{"return nested", `@m[1] = 1; @m[2] = 2; $n = 3; for ($i : 0..$n) { for ($kv : @m) { if ($kv.0 == 2) { @r = 200 + $i; return } } } $s = 999`, 200},
		{"tuples equal", `$a = (1, "ab", (2, "c")); $b = (1, "ab", (2, "cd")); $c = (1, "ab", (2, "c")); if ($a == $c) { $s += 1 } if ($a != $b) { $s += 10 } if ($a == $b) { $s += 100 }`, 11},
		{"return inline", `for ($i : 0..3) { if ($i == 1) { @r = 300 + $i; return } } $s = 999`, 301},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			coll := runBegin(t, "BEGIN { $s = 0; "+c.body+"; @r = $s }")
			if got := keyless(t, coll, "r"); got != c.want {
				t.Errorf("@r = %d, want %d", got, c.want)
			}
		})
	}
}

// TestLoopsLoad puts loops in probes with a context through the
// verifier: print() in a loop body (its head's skb and function from the
// probe), loops in skb: and tracepoint programs, a map loop in one probe
// over a map another fills.
func TestLoopsLoad(t *testing.T) {
	for _, s := range []string{
		`tracepoint:skb:kfree_skb { @m[dport] = len; $d = dev; for ($kv : @m) { print($kv, $d) } }`,
		`tracepoint:skb:kfree_skb { $n = len; for ($i : 0..$n) { print($i); if ($i > 3) { break } } }`,
		`tracepoint:skb:kfree_skb { for ($i : 0..4) { @[$i, len, dev] = count() } }`,
		`skb:* { @n[func] = count(); for ($kv : @n) { printf("%d\n", $kv.1) } }`,
		`interval:s:1 { for ($kv : @late) { printf("%s %d\n", $kv.0, $kv.1) } } tracepoint:skb:kfree_skb { @late[comm] = count() }`,
		`tracepoint:skb:kfree_skb { $key = (skb, dport); @start[$key] = nsecs; delete(@start, $key); @x[$key, comm] = count() }`,
	} {
		load(t, compile(t, s))
	}
}

// TestLoopStackLimit checks that a loop body and its probe that need
// more than 512 bytes of stack together are a positioned error where
// on_stack_limit keeps their strings on the stack, and load with them in
// the scratch area where it does not.
func TestLoopStackLimit(t *testing.T) {
	body := `BEGIN { @m[1] = 1; $a = str(comm, 200); $b = str(comm, 200); $c = str(comm, 40); for ($kv : @m) { $x = $kv.1 } }`
	text := `config = { on_stack_limit = 1024 } ` + body
	script, info := compiletest.Check(t, text, check.Options{})
	_, err := codegen.Compile(script, info, codegen.Options{})
	var d *lang.Diagnostics
	want := fmt.Sprintf("test.st:1:%d: this loop and the probe around it need", strings.Index(text, "for (")+1)
	if !errors.As(err, &d) || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want a positioned error at the loop", err)
	}
	load(t, compile(t, body))
}

// TestLoopHelperMissing checks that a loop whose helper the kernel lacks
// (Options.HaveHelper says so) is an error at the loop naming the helper,
// and that a constant range, which needs none, still compiles.
func TestLoopHelperMissing(t *testing.T) {
	none := codegen.Options{HaveHelper: func(asm.BuiltinFunc) bool { return false }}
	for _, c := range []struct{ text, want string }{
		{`BEGIN { @m[1] = 1; for ($kv : @m) { print($kv) } }`, "test.st:1:20: this kernel lacks bpf_for_each_map_elem (Linux 5.13)"},
		{`BEGIN { $n = 3; for ($i : 0..$n) { print($i) } }`, "test.st:1:17: this kernel lacks bpf_loop (Linux 5.17)"},
	} {
		script, info := compiletest.Check(t, c.text, check.Options{})
		_, err := codegen.Compile(script, info, none)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %s", c.text, err, c.want)
		}
	}
	load(t, compileWith(t, `BEGIN { for ($i : 0..3) { print($i) } }`, none))
}
