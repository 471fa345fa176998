package main

import (
	"strings"
	"testing"

	"github.com/skbtrace/skbtrace/runtime/kernel"
	"github.com/skbtrace/skbtrace/runtime/pipeline"
	"github.com/skbtrace/skbtrace/runtime/session"
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

// TestListEveryKind checks -l and -lv of the other probe kinds against this
// kernel: every tracepoint of a tracefs category, with its format fields as
// bpftrace prints them; kernel functions by kprobe and fentry globs, with
// their arguments and return type; a struct's members.
func TestListEveryKind(t *testing.T) {
	code, out, errs := runCLI(t, "-l", "tracepoint:net:*")
	if code != 0 || !strings.Contains(out, "tracepoint:net:netif_receive_skb\n") || !strings.Contains(out, "tracepoint:net:net_dev_xmit\n") {
		t.Fatalf("-l tracepoint:net:*: exit %d %s\n%s", code, errs, out)
	}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasPrefix(l, "tracepoint:net:") {
			t.Errorf("-l tracepoint:net:* lists %q", l)
		}
	}
	code, out, _ = runCLI(t, "-lv", "tracepoint:net:netif_receive_skb")
	want := "tracepoint:net:netif_receive_skb\n    void * skbaddr\n    unsigned int len\n    __data_loc char[] name\n"
	if code != 0 || out != want {
		t.Errorf("-lv tracepoint: exit %d\n%q\nwant %q", code, out, want)
	}
	// A tracepoint that carries no sk_buff is listed too.
	if code, out, _ = runCLI(t, "-l", "t:syscalls:sys_enter_openat"); code != 0 || out != "tracepoint:syscalls:sys_enter_openat\n" {
		t.Errorf("-l t:syscalls:sys_enter_openat: exit %d %q", code, out)
	}
	code, out, _ = runCLI(t, "-l", "kprobe:tcp_v4_*")
	if code != 0 || !strings.Contains(out, "kprobe:tcp_v4_connect\n") || !strings.Contains(out, "kprobe:tcp_v4_rcv\n") || strings.Contains(out, "tcp_v6") {
		t.Errorf("-l kprobe:tcp_v4_*: exit %d\n%s", code, out)
	}
	// fentry and fexit name their module, as bpftrace 0.26 lists them.
	code, out, _ = runCLI(t, "-l", "fentry:ip_rcv*")
	if code != 0 || !strings.Contains(out, "fentry:vmlinux:ip_rcv\n") || !strings.Contains(out, "fentry:vmlinux:ip_rcv_finish\n") {
		t.Errorf("-l fentry:ip_rcv*: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "-lv", "fexit:tcp_v4_connect")
	want = "fexit:vmlinux:tcp_v4_connect\n    struct sock * sk\n    struct sockaddr * uaddr\n    int addr_len\n    int retval\n"
	if code != 0 || out != want {
		t.Errorf("-lv fexit:tcp_v4_connect: exit %d\n%q\nwant %q", code, out, want)
	}
	code, out, _ = runCLI(t, "-lv", "struct sock")
	for _, w := range []string{"struct sock {\n", "    struct sock_common __sk_common;\n", "    u32 sk_max_ack_backlog;\n", "\n};\n"} {
		if code != 0 || !strings.Contains(out, w) {
			t.Errorf("-lv 'struct sock' lacks %q: exit %d\n%s", w, code, out)
		}
	}
	// Anonymous unions are spelled out: skb->dev is in one.
	if code, out, _ = runCLI(t, "-lv", "struct sk_buff"); code != 0 || !strings.Contains(out, "            struct net_device *dev;\n") || !strings.Contains(out, "    char cb[48];\n") {
		t.Errorf("-lv 'struct sk_buff': exit %d\n%s", code, out)
	}
	for _, p := range []string{"kprobe:no_such_fn*", "tracepoint:net:no_such_*"} {
		code, _, errs = runCLI(t, "-l", p)
		if code != 1 || errs != "skbtrace: no probe matches \""+p+"\"\n" {
			t.Errorf("-l %s: exit %d %q", p, code, errs)
		}
	}
	if code, _, errs = runCLI(t, "-lv", "struct no_such_struct"); code != 1 || !strings.Contains(errs, "no struct matches") {
		t.Errorf("-lv struct no_such_struct: exit %d %q", code, errs)
	}
}

// TestListSkbRet checks -l 'skbret:GLOB' against this kernel. With
// --backend tracepoint, and on a kernel where no function backend works
// (skb: falls back to tracepoints), it lists nothing, exits 1 and says why;
// -l 'skb:GLOB' there says the functions it lists do not attach. Where a
// function backend works, it lists what -l 'skb:GLOB' lists, as skbret:,
// and -lv adds the return type (the VM suite's list-skbret case runs that
// side on 6.12).
func TestListSkbRet(t *testing.T) {
	code, out, errs := runCLI(t, "--backend", "tracepoint", "-l", "skbret:ip_rcv*")
	want := "skbtrace: skbret:ip_rcv* attaches to nothing on this kernel: --backend tracepoint was asked for, so skb: probes fall back to the tracepoints that carry an sk_buff, and tracepoints have no returns (skbtrace -l 'skb:ip_rcv*' lists what skb: attaches to)\n"
	if code != 1 || out != "" || errs != want {
		t.Errorf("--backend tracepoint -l skbret:ip_rcv*: exit %d\n%s%q\nwant %q", code, out, errs, want)
	}
	if code, _, errs = runCLI(t, "-l", "skbret:no_such_function_*"); code != 1 || errs != "skbtrace: no probe matches \"skbret:no_such_function_*\"\n" {
		t.Errorf("-l skbret:no_such_function_*: exit %d %q", code, errs)
	}
	_, entries, _ := runCLI(t, "-l", "skb:ip_rcv*")
	code, out, errs = runCLI(t, "-l", "skbret:ip_rcv*")
	d, _, err := kernel.CachedDiscovery("")
	if err != nil {
		t.Fatal(err)
	}
	backend, reasons, err := session.ChooseBackend("auto", pipeline.ProbeOn(d))
	if err != nil {
		t.Fatal(err)
	}
	if backend == session.BackendTracepoint {
		t.Logf("no function backend here: %s", strings.Join(reasons, "; "))
		if code != 1 || out != "" || !strings.HasPrefix(errs, "skbtrace: skbret:ip_rcv* attaches to nothing on this kernel: no function backend works here (kprobe-multi: ") ||
			!strings.HasSuffix(errs, ", and tracepoints have no returns (skbtrace -l 'skb:ip_rcv*' lists what skb: attaches to)\n") {
			t.Errorf("-l skbret:ip_rcv* without a function backend: exit %d\n%s%s", code, out, errs)
		}
		_, _, errs = runCLI(t, "-l", "skb:ip_rcv*")
		if !strings.Contains(errs, "the skb: functions listed do not attach on this kernel: no function backend works here (") {
			t.Errorf("-l skb:ip_rcv* without a function backend does not say so: %q", errs)
		}
		return
	}
	t.Logf("skb: attaches with %s here", backend)
	if code != 0 || out != strings.ReplaceAll(entries, "skb:", "skbret:") {
		t.Errorf("-l skbret:ip_rcv*: exit %d %s\n%s\nwant -l skb:ip_rcv*'s\n%s", code, errs, out, entries)
	}
	code, out, _ = runCLI(t, "-lv", "skbret:ip_rcv_core")
	if want := "skbret:ip_rcv_core(struct sk_buff *skb, struct net *net)  [retval: struct sk_buff *; skb: arg0]\n"; code != 0 || out != want {
		t.Errorf("-lv skbret:ip_rcv_core: exit %d %q; want %q", code, out, want)
	}
}
