package codegen_test

import "testing"

// TestStdlib026Run runs bpftrace 0.26's string and compile-time functions
// in the kernel, in a begin probe, and checks the value left in @r.
func TestStdlib026Run(t *testing.T) {
	cases := []struct {
		name, script string
		want         int64
	}{
		{"strlen", `begin { $s = "hello"; @r = strlen($s) }`, 5},
		{"strlen of comm", `begin { @r = strlen(comm) > 0 }`, 1},
		{"strstr", `begin { @r = strstr("hello world", "o w") * 10 + strstr("abc", "x") }`, 39},
		{"memcmp", `begin { @r = memcmp("abc", "abd", 3) * 10 + memcmp("abc", "abd", 2) }`, -10},
		{"is_ type tests", `begin { @r = is_ptr(curtask) * 100 + is_str(comm) * 10 + is_integer("a") }`, 110},
		{"strcap", `begin { @r = strcap(comm) }`, 16},
		{"syscall_name of a value", `begin { $n = 0; $s = syscall_name($n); @r = strlen($s) > 0 }`, 1},
		{"kptr", `begin { @r = kptr(curtask) == curtask }`, 1},
		{"static_assert", `begin { static_assert(1 < 2, "no"); @r = 7 }`, 7},
		{"find", `begin { @m[3] = 40; $v = 0; $f = find(@m, 3, $v); $g = find(@m, 4, $v); @r = $v + $f * 2 + $g }`, 42},
		{"globmatch", `begin { @r = globmatch("hello", "h*l?o") * 10 + globmatch("hello", "*x*") }`, 10},
		{"len of a map", `begin { @m[1] = 1; @m[9] = 2; @r = len(@m) * 10 + (len(@m) > 1) }`, 21},
		{"getopt default", `begin { @r = getopt("n", 5) }`, 5},
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
