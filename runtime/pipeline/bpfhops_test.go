package pipeline

import (
	"strings"
	"testing"
)

// TestHopScripts checks the scripts --filter, --timeline and --graph run
// with BPF programs as hops: tc programs' entries and returns under the
// filter (the return printing the verdict first), XDP programs' with the
// frame's values; the config that lets their probes wait for programs
// loaded while tracing; none without hops; -w's tc programs only; the
// graph's XDP programs under --filter alone, none where the selection
// has a predicate of its own.
func TestHopScripts(t *testing.T) {
	both := Hops{TC: true, XDP: true}
	f := `/pcap("udp dst port 9")/`
	for _, c := range []struct {
		name, got, want string
	}{
		{"--filter", FilterScript("udp dst port 9", false, true, both).Text, hopConfig +
			"skb:* " + f + " { track(); print(dev, netns, mark, pkt) }\n" +
			"bpf:tc:* " + f + " { print(dev, netns, mark, pkt) }\nbpfret:tc:* " + f + " { print(retval, dev, netns, mark, pkt) }\n" +
			"bpf:xdp:* " + f + " { print(dev, len, pkt) }\nbpfret:xdp:* " + f + " { print(retval, dev, len, pkt) }\n"},
		{"--filter, no hops", FilterScript("udp dst port 9", false, true, Hops{}).Text, "skb:* " + f + " { track(); print(dev, netns, mark, pkt) }\n"},
		{"--filter -w", FilterScript("udp dst port 9", true, true, both).Text, hopConfig +
			"skb:* " + f + " { track(); capture() }\nbpf:tc:* " + f + " { capture() }\nbpfret:tc:* " + f + " { capture() }\n"},
		{"--timeline", TimelineScript("udp dst port 9", Hops{XDP: true}).Text, hopConfig +
			"skb:* " + f + " { track(); print(dev, netns, len) }\ntracepoint:skb:kfree_skb " + f + " { print(reason, ksym(location)) }\n" +
			"bpf:xdp:* " + f + " { print(dev, len) }\nbpfret:xdp:* " + f + " { print(retval, dev, len) }\n"},
	} {
		if c.got != c.want {
			t.Errorf("%s:\n%s\nwant\n%s", c.name, c.got, c.want)
		}
	}
	withHops := func() Hops { return both }
	src, err := GraphScript("", "udp dst port 9", withHops)
	if err != nil {
		t.Fatal(err)
	}
	want := hopConfig + "skb:* " + f + " { track(); print(skb) }\nskbret:* /0/ { print(retval, duration) }\n" +
		"bpf:tc:* " + f + " { print(skb) }\nbpfret:tc:* " + f + " { print(retval) }\n" +
		"bpf:xdp:* " + f + " { print(len) }\nbpfret:xdp:* " + f + " { print(retval) }\n"
	if src.Text != want {
		t.Errorf("--graph --filter:\n%s\nwant\n%s", src.Text, want)
	}
	src, _ = GraphScript("skb:* /mark == 1/", "", withHops)
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
