package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/skbtrace/skbtrace/internal/bpfprogtest"
	"github.com/skbtrace/skbtrace/runtime"
)

// TestHopScripts checks the scripts --filter, --timeline and --graph run
// with BPF programs as hops: tc programs' entries and returns under the
// filter (the return printing the verdict first), XDP programs' with the
// frame's values; the config that lets their probes wait for programs
// loaded while tracing; none without hops; -w's tc programs only; the
// graph's XDP programs under --filter alone, none where the selection
// has a predicate of its own.
func TestHopScripts(t *testing.T) {
	both := hops{tc: true, xdp: true}
	f := `/pcap("udp dst port 9")/`
	for _, c := range []struct {
		name, got, want string
	}{
		{"--filter", filterScript("udp dst port 9", false, both).Text, hopConfig +
			"skb:* " + f + " { print(dev, netns, mark, pkt) }\n" +
			"bpf:tc:* " + f + " { print(dev, netns, mark, pkt) }\nbpfret:tc:* " + f + " { print(retval, dev, netns, mark, pkt) }\n" +
			"bpf:xdp:* " + f + " { print(dev, len, pkt) }\nbpfret:xdp:* " + f + " { print(retval, dev, len, pkt) }\n"},
		{"--filter, no hops", filterScript("udp dst port 9", false, hops{}).Text, "skb:* " + f + " { print(dev, netns, mark, pkt) }\n"},
		{"--filter -w", filterScript("udp dst port 9", true, both).Text, hopConfig +
			"skb:* " + f + " { capture() }\nbpf:tc:* " + f + " { capture() }\nbpfret:tc:* " + f + " { capture() }\n"},
		{"--timeline", timelineScript("udp dst port 9", hops{xdp: true}).Text, hopConfig +
			"skb:* " + f + " { track(); print(dev, netns, len) }\ntracepoint:skb:kfree_skb " + f + " { print(reason, ksym(location)) }\n" +
			"bpf:xdp:* " + f + " { print(dev, len) }\nbpfret:xdp:* " + f + " { print(retval, dev, len) }\n"},
	} {
		if c.got != c.want {
			t.Errorf("%s:\n%s\nwant\n%s", c.name, c.got, c.want)
		}
	}
	withHops := func() hops { return both }
	src, err := graphScript("", "udp dst port 9", withHops)
	if err != nil {
		t.Fatal(err)
	}
	want := hopConfig + "skb:* " + f + " { track(); print(skb) }\nskbret:* /0/ { print(retval, duration) }\n" +
		"bpf:tc:* " + f + " { print(skb) }\nbpfret:tc:* " + f + " { print(retval) }\n" +
		"bpf:xdp:* " + f + " { print(len) }\nbpfret:xdp:* " + f + " { print(retval) }\n"
	if src.Text != want {
		t.Errorf("--graph --filter:\n%s\nwant\n%s", src.Text, want)
	}
	src, _ = graphScript("skb:* /mark == 1/", "", withHops)
	if want := "bpf:tc:* /mark == 1/ { print(skb) }\nbpfret:tc:* /mark == 1/ { print(retval) }\n"; !strings.HasSuffix(src.Text, want) || strings.Contains(src.Text, "xdp") {
		t.Errorf("--graph with a predicate:\n%s\nwant it to end\n%s", src.Text, want)
	}
}

// TestSkbOnly checks which filters XDP programs cannot evaluate on their
// frame: those reading the skb's pkt_type (inbound, outbound).
func TestSkbOnly(t *testing.T) {
	for filter, want := range map[string]string{
		"udp dst port 9":             "",
		"vxlan 42 and tcp":           "",
		"ifname lo and host 1.2.3.4": "",
		"inbound and udp":            "pkt_type",
		"udp or outbound":            "pkt_type",
	} {
		if got := skbOnly(filter); got != want {
			t.Errorf("%q: %q, want %q", filter, got, want)
		}
	}
}

// TestBPFHopsNote checks --filter on a kernel that refuses fentry on BPF
// programs (this host): with a tc program with BTF loaded, one line on
// stderr names it and says why it is not a hop, and the trace goes on
// (exit 0); --bpf-hops=false says nothing of it.
func TestBPFHopsNote(t *testing.T) {
	if err := runtime.ProbeBPFTrace(); err == nil {
		t.Skip("fentry on BPF programs works here: the VM suite's bpf-hops cases cover it")
	}
	name := testProgName("hopn")
	loadTestProg(t, bpfprogtest.TCDropPort(name, 9))
	for _, flags := range [][]string{nil, {"--bpf-hops=false"}} {
		var out, errb bytes.Buffer
		args := append(append([]string{}, flags...), "--filter", "udp dst port 7 and host 127.0.0.99", "--duration", "200ms")
		code := run(args, &out, &errb)
		note := "skbtrace: the tc and XDP programs loaded ("
		n := strings.Count(errb.String(), note)
		switch {
		case code != 0:
			t.Errorf("%v: exit %d: %s", args, code, errb.String())
		case flags == nil && (n != 1 || !strings.Contains(errb.String(), "tc "+name) || !strings.Contains(errb.String(), "are not traced as hops: the kernel refused fentry on a BPF program (EPERM)")):
			t.Errorf("%v: stderr lacks the one note naming the program:\n%s", args, errb.String())
		case flags != nil && n != 0:
			t.Errorf("%v: stderr has the note:\n%s", args, errb.String())
		}
	}
}

// TestWhydropRefusedPrograms checks whydrop where the kernel refuses fentry
// on BPF programs (this host) and a tc program is loaded: its bpfret:tc
// probe is skipped with one line that names the program and why, and the
// tool traces on (exit 0).
func TestWhydropRefusedPrograms(t *testing.T) {
	if err := runtime.ProbeBPFTrace(); err == nil {
		t.Skip("fentry on BPF programs works here: the VM suite's bpf-whydrop cases cover it")
	}
	name := testProgName("wdrop")
	loadTestProg(t, bpfprogtest.TCDropPort(name, 9))
	var out, errb bytes.Buffer
	code := run([]string{"--duration", "300ms", "whydrop"}, &out, &errb)
	if n := strings.Count(errb.String(), "bpfret:tc:* is skipped: tc program "); code != 0 || n != 1 ||
		!strings.Contains(errb.String(), "the kernel refused fentry on a BPF program (EPERM)") {
		t.Errorf("exit %d, %d lines on bpfret:tc:*:\n%s", code, n, errb.String())
	}
}
