package main

import (
	"strings"
	"testing"
)

// TestListProbes checks -l and -lv against this kernel: skb: functions by
// pattern, the pattern as the next argument or after =, prototypes with
// the skb's position, and a clear error for a pattern matching nothing.
func TestListProbes(t *testing.T) {
	code, out, errs := runCLI(t, "-l", "ip_rcv*")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"skb:ip_rcv\n", "skb:ip_rcv_finish\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("-l ip_rcv* lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "tcp_v4_rcv") {
		t.Errorf("-l ip_rcv* lists tcp_v4_rcv:\n%s", out)
	}
	code, out, _ = runCLI(t, "-v", "-l=skb:ip_rcv_finish")
	want := "skb:ip_rcv_finish(struct net *net, struct sock *sk, struct sk_buff *skb)  [skb: arg2]\n"
	if code != 0 || out != want {
		t.Errorf("-lv: exit %d, %q; want %q", code, out, want)
	}
	code, out, _ = runCLI(t, "-l", "*kfree_skb")
	if code != 0 || !strings.Contains(out, ":kfree_skb\n") || !strings.HasPrefix(out, "skb:") {
		t.Errorf("-l *kfree_skb: exit %d:\n%s", code, out)
	}
	if strings.Contains(out, "__traceiter_") || strings.Contains(out, "__bpf_trace_") {
		t.Errorf("-l lists the tracepoints' own machinery:\n%s", out)
	}
	code, _, errs = runCLI(t, "-l", "no_such_function_*")
	if code != 1 || errs != "skbtrace: no probe matches \"no_such_function_*\"\n" && !strings.HasSuffix(errs, "skbtrace: no probe matches \"no_such_function_*\"\n") {
		t.Errorf("no match: exit %d, %q", code, errs)
	}
}

// TestForcedBackendsNameTheMissingFeature checks --backend on this kernel:
// each function backend works, or fails with one line naming what the
// kernel lacks; tracepoint always falls back.
func TestForcedBackendsNameTheMissingFeature(t *testing.T) {
	for _, b := range []string{"kprobe-multi", "fentry", "kprobe"} {
		code, _, errs := runCLI(t, "--backend", b, "-e", `skb:kfree_skbmem { @ = count() }`, "--duration", "20ms")
		if code == 0 {
			t.Logf("--backend %s works on this kernel", b)
			continue
		}
		lines := strings.Split(strings.TrimSpace(errs), "\n")
		if len(lines) != 1 || !strings.HasPrefix(lines[0], "skbtrace: --backend "+b+": this kernel ") {
			t.Errorf("--backend %s: %q; want one line naming the missing feature", b, errs)
		}
	}
	code, _, errs := runCLI(t, "--backend", "tracepoint", "-e", `skb:kfree_skb { @ = count() }`, "--duration", "20ms")
	if code != 0 || !strings.Contains(errs, "skb:kfree_skb attaches to the 1 tracepoints that carry an sk_buff") {
		t.Errorf("--backend tracepoint: exit %d, %s", code, errs)
	}
	code, _, errs = runCLI(t, "--backend", "bogus", "-e", `skb:kfree_skb { @ = count() }`)
	if code != 1 || !strings.Contains(errs, "--backend takes auto, kprobe-multi, fentry, kprobe or tracepoint") {
		t.Errorf("--backend bogus: exit %d, %s", code, errs)
	}
}
