package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/skbtrace/skbtrace/runtime/pipeline"
)

// TestSkbRetNeedsFunctionBackend: skbret: with the tracepoint fallback
// (forced here; on this kind of host, where no function backend works, the
// default too) is an error at the probe that says returns need a function
// backend, before anything loads.
func TestSkbRetNeedsFunctionBackend(t *testing.T) {
	var out, errb bytes.Buffer
	code := run([]string{"--backend", "tracepoint", "-e", "BEGIN { exit() }\nskbret:ip_rcv_core { print(retval, duration) }"}, &out, &errb)
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", code, errb.String())
	}
	want := "cmdline:2:1: skbret:ip_rcv_core cannot be traced here: tracepoints have no returns\n" +
		"    skbret:ip_rcv_core { print(retval, duration) }\n" +
		"    ^~~~~~~~~~~~~~~~~~\n" +
		"    hint: returns need a function backend: kprobe-multi, fentry (fexit) or kprobe (kretprobe); --backend tracepoint was asked for\n"
	if errb.String() != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", errb.String(), want)
	}
}

// TestGraphSelection: --graph's argument becomes the entries and returns
// of its functions, the predicate and --filter deciding which packets; a
// selection that is not skb: probes says what it takes.
func TestGraphSelection(t *testing.T) {
	asked := false
	noHops := func() pipeline.Hops { asked = true; return pipeline.Hops{} }
	src, err := pipeline.GraphScript("skb:ip_rcv*, skb:nf_hook_slow /mark == 1/", "udp port 9", noHops)
	if err != nil {
		t.Fatal(err)
	}
	want := `skb:ip_rcv*, skb:nf_hook_slow /pcap("udp port 9") && (mark == 1)/ { track(); print(skb) }` + "\n" +
		`skbret:ip_rcv*, skbret:nf_hook_slow /0/ { print(retval, duration) }` + "\n"
	if src.Text != want {
		t.Errorf("script:\n%s\nwant:\n%s", src.Text, want)
	}
	if asked {
		t.Error("a selection without skb:* asked for BPF programs' hops")
	}
	if src, _ := pipeline.GraphScript("", "", noHops); !strings.HasPrefix(src.Text, "skb:* { track(); print(skb) }\n") {
		t.Errorf("empty selection:\n%s", src.Text)
	}
	for _, bad := range []string{"kprobe:ip_rcv", "skb:ip_rcv /mark == 1", "skb:a,,skb:b"} {
		if _, err := pipeline.GraphScript(bad, "", noHops); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"--graph", "--timeline", "skb:ip_rcv"}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "choose one") {
		t.Errorf("--graph with --timeline: exit %d, %s", code, errb.String())
	}
	errb.Reset()
	if code := run([]string{"--graph", "skb:ip_rcv", "-c", "true"}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "flags go before it") {
		t.Errorf("--graph with a flag after the selection: exit %d, %s", code, errb.String())
	}
}
