package main

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// TestCompositeValuesEndToEnd checks addresses and strings as map keys,
// values and variables, map reads in expressions, signed division and
// elapsed, on datagrams sent to a closed loopback port.
func TestCompositeValuesEndToEnd(t *testing.T) {
	port := closedUDPPort(t)
	const sent = 3
	script := fmt.Sprintf(`tracepoint:skb:kfree_skb /dport == %d/ {
	$src = saddr; $who = comm;
	@flows[$src, daddr, dport] = count();
	@names[$who] = count();
	@last[dport] = daddr;
	@seen = count();
	@neg = (0 - len) / 4;
	if (@flows[$src, daddr, dport] == %d) { printf("third %%s %%s %%d\n", $src, @last[dport], elapsed > 0) }
	@len[dev] = sum(len)
}`, port, sent)
	traffic := fmt.Sprintf(`bash -c 'for i in $(seq %d); do printf abcde > /dev/udp/127.0.0.1/%d; done'`, sent, port)
	code, out, errs := runCLI(t, "-e", script, "-c", traffic)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := fmt.Sprintf("third 127.0.0.1 127.0.0.1 1\n"+
		"@flows[127.0.0.1, 127.0.0.1, %d]: %d\n\n"+
		"@names[bash]: %d\n\n"+
		"@last[%d]: 127.0.0.1\n\n"+
		"@seen: %d\n\n"+
		"@neg: -3\n\n"+
		"@len[lo]: %d\n", port, sent, sent, port, sent, sent*13)
	if out != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
}

// TestKstackEndToEnd checks that kstack keys print the kernel stack of the
// drop: the frames of the UDP receive path, one a line, as bpftrace does.
func TestKstackEndToEnd(t *testing.T) {
	port := closedUDPPort(t)
	script := fmt.Sprintf(`tracepoint:skb:kfree_skb /dport == %d/ { @[kstack] = count() }`, port)
	traffic := fmt.Sprintf(`bash -c 'for i in 1 2; do printf x > /dev/udp/127.0.0.1/%d; done'`, port)
	code, out, errs := runCLI(t, "-e", script, "-c", traffic)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !regexp.MustCompile(`(?s)^@\[\n( {8}\S+\n)+\]: 2\n$`).MatchString(out) {
		t.Fatalf("output is not one stack counted twice:\n%s", out)
	}
	if !strings.HasPrefix(out, "@[\n        sk_skb_reason_drop+0x") && !strings.HasPrefix(out, "@[\n        kfree_skb") {
		t.Errorf("the stack does not start at the drop, above the tracing program:\n%s", out)
	}
	for _, fn := range []string{"__udp4_lib_rcv", "ip_local_deliver_finish", "udp_sendmsg"} {
		if !strings.Contains(out, "        "+fn+"+0x") {
			t.Errorf("stack lacks %s:\n%s", fn, out)
		}
	}
}

// TestTrackEndToEnd checks track(): the datagrams are tracked where they
// are received, and their drop is then counted although the drop probe's
// predicate matches nothing. Freed skbs are forgotten.
func TestTrackEndToEnd(t *testing.T) {
	port := closedUDPPort(t)
	const sent = 3
	script := fmt.Sprintf(`tracepoint:net:netif_receive_skb /dport == %d/ { track() }
tracepoint:skb:kfree_skb /len == 123456/ { @tracked[dport] = count() }`, port)
	traffic := fmt.Sprintf(`bash -c 'for i in $(seq %d); do printf x > /dev/udp/127.0.0.1/%d; done'`, sent, port)
	code, out, errs := runCLI(t, "-e", script, "-c", traffic)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if want := fmt.Sprintf("@tracked[%d]: %d\n", port, sent); out != want {
		t.Errorf("output %q, want %q (stderr %s)", out, want, errs)
	}
	// Where the kernel refuses fexit, clones are not followed: it must say so.
	if !fexitWorks() && !strings.Contains(errs, "track(): clones and copies are not followed: this kernel refuses fexit programs even to root\n") {
		t.Errorf("stderr does not say clones are not followed: %s", errs)
	}
	if !strings.Contains(errs, "tracing 2 probes;") {
		t.Errorf("stderr counts the helper programs as probes: %s", errs)
	}
}

// fexitWorks reports whether this kernel loads fexit programs.
func fexitWorks() bool {
	var out, errb bytes.Buffer
	code := run([]string{"-e", `fexit:skb_clone { @n = count() }`, "--duration", "1ms"}, &out, &errb)
	return code == 0
}
