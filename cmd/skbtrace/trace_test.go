package main

import (
	"encoding/json"
	"fmt"
	"net"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
)

// closedUDPPort returns a loopback UDP port nobody listens on.
func closedUDPPort(t *testing.T) int {
	t.Helper()
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := pc.LocalAddr().(*net.UDPAddr).Port
	pc.Close()
	return port
}

// TestTraceDropsEndToEnd runs skbtrace with -c: the command sends datagrams
// to a closed port on loopback, and skbtrace prints the maps it filled when
// the command exits: counts equal to the packets sent, keys from the packets.
func TestTraceDropsEndToEnd(t *testing.T) {
	port := closedUDPPort(t)
	const sent = 4
	script := fmt.Sprintf(`tracepoint:skb:kfree_skb /dport == %d/ { @[reason] = count(); @bytes[l4proto, dport] = sum(len) }`, port)
	traffic := fmt.Sprintf(`bash -c 'for i in $(seq %d); do printf abcde > /dev/udp/127.0.0.1/%d; done'`, sent, port)
	code, out, errs := runCLI(t, "-e", script, "-c", traffic)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := fmt.Sprintf("@[NO_SOCKET]: %d\n\n@bytes[udp, %d]: %d\n", sent, port, sent*(8+5))
	if out != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
	if !strings.Contains(errs, "tracing 1 probe;") {
		t.Errorf("stderr: %q", errs)
	}
}

// TestSkbReasonOnFallback checks that `reason` in an skb: probe is the drop
// reason where the skb is dropped: here the kfree_skb tracepoint, for
// datagrams to a closed port (it used to be SKB_NOT_DROPPED_YET always).
func TestSkbReasonOnFallback(t *testing.T) {
	port := closedUDPPort(t)
	script := fmt.Sprintf(`skb:kfree_skb /dport == %d/ { print(reason) }`, port)
	traffic := fmt.Sprintf(`bash -c 'for i in 1 2; do printf abc > /dev/udp/127.0.0.1/%d; done'`, port)
	code, out, errs := runCLI(t, "--backend", "tracepoint", "-e", script, "-c", traffic)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 lines, got:\n%s", out)
	}
	for _, l := range lines {
		if f := strings.Fields(l); len(f) != 5 || f[3] != "kfree_skb" || f[4] != "reason=NO_SOCKET" {
			t.Errorf("line %q: want kfree_skb reason=NO_SOCKET", l)
		}
	}
}

// TestNothingStaysAttached checks that after skbtrace returns, no program it
// loaded is left in the kernel.
func TestNothingStaysAttached(t *testing.T) {
	before := programIDs(t)
	code, _, errs := runCLI(t, "-e", `tracepoint:skb:kfree_skb { @[reason] = count() }`, "--duration", "50ms")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	// The kernel frees a program after an RCU grace period once its last
	// reference is gone: wait for that, within a bound.
	deadline := time.Now().Add(5 * time.Second)
	for {
		var left []string
		for id := range programIDs(t) {
			if !before[id] {
				if p, err := ebpf.NewProgramFromID(id); err == nil {
					info, _ := p.Info()
					p.Close()
					left = append(left, fmt.Sprintf("%d (%s)", id, info.Name))
				}
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("programs still loaded 5s after skbtrace returned: %v", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func programIDs(t *testing.T) map[ebpf.ProgramID]bool {
	t.Helper()
	ids := map[ebpf.ProgramID]bool{}
	var id ebpf.ProgramID
	for {
		next, err := ebpf.ProgramGetNextID(id)
		if err != nil {
			return ids
		}
		ids[next] = true
		id = next
	}
}

// TestKernelLimitsAreExplained checks the messages for what this kind of
// kernel may lack: kprobes (CONFIG_KPROBES) and fentry (refused to root).
// Where the kernel has the feature, the probe attaches and the test says so.
func TestKernelLimitsAreExplained(t *testing.T) {
	for _, tc := range []struct{ script, want string }{
		{`kprobe:tcp_v4_rcv { @[len] = count() }`, "this kernel has no kprobes"},
		{`fentry:tcp_v4_rcv { @[len] = count() }`, "this kernel refuses fentry/fexit programs"},
	} {
		code, _, errs := runCLI(t, "-e", tc.script, "--duration", "10ms")
		if code == 0 {
			t.Logf("%s: attached; this kernel has the feature", tc.script)
			continue
		}
		if !strings.Contains(errs, tc.want) {
			t.Errorf("%s: stderr %q, want %q", tc.script, errs, tc.want)
		}
	}
}

// TestPrintAndPrintfEndToEnd checks event output: printf prints exactly its
// format, print prints the columns and name=value pairs, with the values the
// packets carried.
func TestPrintAndPrintfEndToEnd(t *testing.T) {
	port := closedUDPPort(t)
	script := fmt.Sprintf(`tracepoint:skb:kfree_skb /dport == %d/ {
		printf("drop %%s :%%u len=%%d dev=%%s proto=%%s\n", reason, dport, len, dev, l4proto);
		print(len, dev, reason, dport, comm)
	}`, port)
	traffic := fmt.Sprintf(`bash -c 'for i in 1 2 3; do printf 1234567 > /dev/udp/127.0.0.1/%d; done'`, port)
	code, out, errs := runCLI(t, "-e", script, "-c", traffic)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 6 {
		t.Fatalf("want 6 lines, got %d:\n%s", len(lines), out)
	}
	wantPrintf := fmt.Sprintf("drop NO_SOCKET :%d len=15 dev=lo proto=udp", port)
	wantPrint := fmt.Sprintf("kfree_skb                len=15 dev=lo reason=NO_SOCKET dport=%d comm=bash", port)
	for i := 0; i < 6; i += 2 {
		if lines[i] != wantPrintf {
			t.Errorf("line %d: %q, want %q", i, lines[i], wantPrintf)
		}
		f := strings.Fields(lines[i+1])
		// time, CPU, skb address, then the function and values.
		if len(f) < 4 || len(f[0]) != len("15:04:05.000000") || !strings.HasPrefix(f[2], "0xffff") || !strings.HasSuffix(lines[i+1], wantPrint) {
			t.Errorf("line %d: %q, want time cpu skb and %q", i+1, lines[i+1], wantPrint)
		}
	}
	if strings.Contains(errs, "lost") {
		t.Errorf("events lost: %s", errs)
	}
}

// TestAddressesEndToEnd sends one datagram over IPv4 and one over IPv6
// loopback and checks the addresses skbtrace read from their IP headers, and
// that the prefix test selects them.
func TestAddressesEndToEnd(t *testing.T) {
	port := closedUDPPort(t)
	script := fmt.Sprintf(`tracepoint:skb:kfree_skb /dport == %d && (saddr in 127.0.0.0/8 || saddr == ::1)/ { printf("%%s -> %%s:%%u\n", saddr, daddr, dport) }`, port)
	traffic := fmt.Sprintf(`bash -c 'printf x > /dev/udp/127.0.0.1/%d; printf x > /dev/udp/::1/%d'`, port, port)
	code, out, errs := runCLI(t, "-e", script, "-c", traffic)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := fmt.Sprintf("127.0.0.1 -> 127.0.0.1:%d\n::1 -> ::1:%d\n", port, port)
	if out != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
}

// TestJSONEndToEnd checks -f json: every line is one JSON object, events and
// maps, with the values the packet carried.
func TestJSONEndToEnd(t *testing.T) {
	port := closedUDPPort(t)
	script := fmt.Sprintf(`tracepoint:skb:kfree_skb /dport == %d/ { print(len, dev, saddr, dport); @[reason] = count() }`, port)
	traffic := fmt.Sprintf(`bash -c 'printf abc > /dev/udp/127.0.0.1/%d'`, port)
	code, out, errs := runCLI(t, "-f", "json", "-e", script, "-c", traffic)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 lines, got:\n%s", out)
	}
	var ev struct {
		Type string
		Func string
		Data map[string]any
	}
	if err := json.Unmarshal([]byte(lines[0]), &ev); err != nil {
		t.Fatalf("line 1 is not JSON: %v", err)
	}
	want := map[string]any{"len": float64(11), "dev": "lo", "saddr": "127.0.0.1", "dport": float64(port)}
	if ev.Type != "event" || ev.Func != "kfree_skb" || !reflect.DeepEqual(ev.Data, want) {
		t.Errorf("event %+v, want data %v", ev, want)
	}
	var m struct {
		Type string
		Data map[string]map[string]float64
	}
	if err := json.Unmarshal([]byte(lines[1]), &m); err != nil {
		t.Fatalf("line 2 is not JSON: %v", err)
	}
	if m.Type != "map" || m.Data["@"]["NO_SOCKET"] != 1 {
		t.Errorf("map %+v", m)
	}
}

// TestSpecProgramEndToEnd runs SPEC.md's sample program (with a shorter
// interval): BEGIN and END print, interval prints and clears @drops, and the
// drops of the datagrams sent add up across the interval prints.
func TestSpecProgramEndToEnd(t *testing.T) {
	port := closedUDPPort(t)
	script := `BEGIN { printf("tracing\n") }
skb:ip_rcv*, skb:tcp_v4_rcv /proto == tcp && dport == 80/ { @calls[func] = count() }
tracepoint:skb:kfree_skb { @drops[reason, ksym(location)] = count() }
interval:ms:100 { print(@drops); clear(@drops) }
END { printf("bye\n") }
`
	// The pause lets an interval fire after the last datagram.
	traffic := fmt.Sprintf(`bash -c 'for i in 1 2 3; do printf x > /dev/udp/127.0.0.1/%d; done; sleep 0.3'`, port)
	code, out, errs := runCLI(t, "-e", script, "-c", traffic)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	// After END, the maps still holding data print: drops the machine made
	// after the last interval (IPv6 housekeeping, say) may be there.
	bye := slices.Index(lines, "bye")
	if lines[0] != "tracing" || bye < 0 {
		t.Errorf("BEGIN and END lines missing:\n%s", out)
	}
	for _, l := range lines[bye+1:] {
		if !strings.HasPrefix(l, "@drops[") && l != "" {
			t.Errorf("after END, only the maps may print: %q", l)
		}
	}
	re := regexp.MustCompile(`^@drops\[NO_SOCKET, (\S+)\]: (\d+)$`)
	total := 0
	for _, l := range lines {
		if m := re.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[2])
			total += n
			if strings.HasPrefix(m[1], "0x") {
				t.Errorf("location not resolved to a symbol: %q", l)
			}
		}
	}
	if total != 3 {
		t.Errorf("NO_SOCKET drops add up to %d, want 3:\n%s", total, out)
	}
	if !strings.Contains(errs, "skb:ip_rcv* matches no tracepoint") {
		t.Errorf("skipped probes not reported: %q", errs)
	}
}

// TestAggregationsEndToEnd sends datagrams of known sizes and checks every
// aggregation's printed result: hist and lhist buckets, min, max, avg, stats.
func TestAggregationsEndToEnd(t *testing.T) {
	port := closedUDPPort(t)
	script := fmt.Sprintf(`tracepoint:skb:kfree_skb /dport == %d/ { @h = hist(len); @l[l4proto] = lhist(len, 0, 40, 10); @mn = min(len); @mx = max(len); @a = avg(len); @s = stats(len) }`, port)
	// Payloads of 1, 5, 10, 30, 60 and 100 bytes: lengths 9 to 108 with the UDP header.
	traffic := fmt.Sprintf(`bash -c 'for n in 1 5 10 30 60 100; do head -c $n /dev/zero > /dev/udp/127.0.0.1/%d; done'`, port)
	code, out, errs := runCLI(t, "-e", script, "-c", traffic)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	full := strings.Repeat("@", 52)
	half := strings.Repeat("@", 26) + strings.Repeat(" ", 26)
	none := strings.Repeat(" ", 52)
	want := "@h:\n" +
		"[8, 16)                2 |" + full + "|\n" +
		"[16, 32)               1 |" + half + "|\n" +
		"[32, 64)               1 |" + half + "|\n" +
		"[64, 128)              2 |" + full + "|\n" +
		"\n@l[udp]:\n" +
		"[0, 10)                1 |" + half + "|\n" +
		"[10, 20)               2 |" + full + "|\n" +
		"[20, 30)               0 |" + none + "|\n" +
		"[30, 40)               1 |" + half + "|\n" +
		"[40, ...)              2 |" + full + "|\n" +
		"\n@mn: 9\n\n@mx: 108\n\n@a: 42\n\n@s: { .count = 6, .average = 42, .total = 254 }\n"
	if out != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
}

// TestHistBucketsAsBpftrace puts negative, zero, one and larger values in a
// hist(): the buckets and bars are bpftrace's, recorded from bpftrace
// running the same BEGIN probe.
func TestHistBucketsAsBpftrace(t *testing.T) {
	code, out, errs := runCLI(t, "-e", `BEGIN { @h = hist(-5); @h = hist(0); @h = hist(0); @h = hist(1); @h = hist(2); @h = hist(3); @h = hist(1500); exit() }`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	// A bpftrace program: bpftrace 0.26's exit, two newlines, then the
	// histogram and an empty line.
	want := "\n\n" + `@h:
(..., 0)               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |
[0]                    2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
[1]                    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |
[2, 4)                 2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
[4, 8)                 0 |                                                    |
[8, 16)                0 |                                                    |
[16, 32)               0 |                                                    |
[32, 64)               0 |                                                    |
[64, 128)              0 |                                                    |
[128, 256)             0 |                                                    |
[256, 512)             0 |                                                    |
[512, 1K)              0 |                                                    |
[1K, 2K)               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |

`
	if out != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
}
