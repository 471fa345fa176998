package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestCLIRejects checks the command lines that must fail before anything
// loads: exit status 1, one error on stderr, nothing on stdout, and
// nothing attached (no "tracing" line).
func TestCLIRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string // on stderr
	}{
		{"-c empty", []string{"-e", "BEGIN { exit() }", "-c", ""}, "skbtrace: -c takes a command to run"},
		{"-c blank", []string{"-e", "BEGIN { exit() }", "-c", "  "}, "skbtrace: -c takes a command to run"},
		{"-e empty", []string{"-e", ""}, "cmdline:1:1: empty script: no probes"},
		{"-e blank", []string{"-e", " "}, "cmdline:1:1: empty script: no probes"},
		{"--backend foo, tracepoints only", []string{"--backend", "foo", "-e", "tracepoint:skb:kfree_skb { @ = count() }"}, `--backend takes auto, kprobe-multi, fentry, kprobe or tracepoint, not "foo"`},
		{"--backend foo, BEGIN", []string{"--backend", "foo", "-e", "BEGIN { exit() }"}, `--backend takes auto, kprobe-multi, fentry, kprobe or tracepoint, not "foo"`},
		{"glob matching nothing", []string{"-e", "skb:zzz* { @ = count() }"}, "cmdline:1:1: skb:zzz* matches nothing to trace"},
		{"invalid glob", []string{"-e", "skb:[ { @ = count() }"}, `cmdline:1:1: invalid pattern "[": syntax error in pattern`},
		{"tool without its argument", []string{"pktpath"}, "pktpath.st:23:16: $1 is not given"},
		{"script without its argument", []string{"-e", "tracepoint:skb:kfree_skb /len > $1/ { @ = count() }"}, "cmdline:1:33: $1 is not given"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(tc.args, &out, &errb)
			if code != 1 || !strings.Contains(errb.String(), tc.want) || out.Len() > 0 || strings.Contains(errb.String(), "tracing") {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit 1 and %q", code, out.String(), errb.String(), tc.want)
			}
		})
	}
}

// TestSkbAlternatives checks a probe that lists an skb: name this kernel
// does not have beside one it has: the probe runs on the one, the other is
// named on stderr, and a probe of missing names alone is an error at each.
func TestSkbAlternatives(t *testing.T) {
	var out, errb bytes.Buffer
	code := run([]string{"-e", "skb:zzz_no_such_fn, skb:kfree_skb { @ = count() } BEGIN { exit() }"}, &out, &errb)
	if code != 0 || !strings.Contains(errb.String(), "skbtrace: skb:zzz_no_such_fn matches nothing on this kernel; its probe attaches to the others it lists\n") {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 0 and skb:zzz_no_such_fn named", code, errb.String())
	}
	out.Reset()
	errb.Reset()
	code = run([]string{"-e", "skb:zzz_a, skb:zzz_b { @ = count() }"}, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "cmdline:1:1: skb:zzz_a matches nothing to trace") || !strings.Contains(errb.String(), "cmdline:1:12: skb:zzz_b matches nothing to trace") {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 1 and both names pointed at", code, errb.String())
	}
}
