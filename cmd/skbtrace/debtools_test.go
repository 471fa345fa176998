package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Debian's bpftrace tcp tools, unmodified, as the VM suite runs them:
// bookworm's (bpftrace 0.17) and trixie's (0.23), each directory with a
// PROVENANCE note of where they came from and each file's SHA256.
const (
	debianTools12 = "../../test/vm/testdata/bpftrace"
	debianTools13 = "../../test/vm/testdata/bpftrace-0.23"
)

var provenanceSum = regexp.MustCompile(`(?m)^([0-9a-f]{64})  (\S+)$`)

// TestBpftraceToolsUnmodified checks every script of both directories
// against its PROVENANCE note: each file is listed, each listed file is
// there, and its SHA256 is the one noted, so an edit is caught.
func TestBpftraceToolsUnmodified(t *testing.T) {
	for _, dir := range []string{debianTools12, debianTools13} {
		note, err := os.ReadFile(filepath.Join(dir, "PROVENANCE"))
		if err != nil {
			t.Fatal(err)
		}
		sums := map[string]string{}
		for _, m := range provenanceSum.FindAllStringSubmatch(string(note), -1) {
			sums[m[2]] = m[1]
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.bt"))
		if len(files) != 6 || len(sums) != 6 {
			t.Errorf("%s: %d scripts, %d noted; want the six tcp tools", dir, len(files), len(sums))
		}
		for _, f := range files {
			text, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			got := sha256.Sum256(text)
			if want, ok := sums[filepath.Base(f)]; !ok {
				t.Errorf("%s: not in its PROVENANCE", f)
			} else if hex.EncodeToString(got[:]) != want {
				t.Errorf("%s: SHA256 %x, PROVENANCE says %s: the file was changed", f, got, want)
			}
		}
		for name := range sums {
			if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
				t.Errorf("%s: noted in PROVENANCE: %v", name, err)
			}
		}
	}
}

var dumpProgram = regexp.MustCompile(`(?m)^program \S+: (.+) \(\w+, \d+ instructions, verifier processed \d+\)$`)

// TestBpftraceToolsLoad compiles each of Debian's tcp tools, both
// versions, with -d, which loads every program into the kernel's verifier:
// one per probe bpftrace would attach. (This host has no kprobes: the VM
// suite's bt-*.case run the kprobe tools on traffic.)
func TestBpftraceToolsLoad(t *testing.T) {
	probes := map[string][]string{
		"tcpaccept":  {"BEGIN", "kretprobe:inet_csk_accept"},
		"tcpconnect": {"BEGIN", "kprobe:tcp_connect"},
		"tcpdrop":    {"BEGIN", "tracepoint:skb:kfree_skb", "END"},
		"tcplife":    {"BEGIN", "kprobe:tcp_set_state", "END"},
		"tcpretrans": {"BEGIN", "kprobe:tcp_retransmit_skb", "END"},
		"tcpsynbl":   {"BEGIN", "kprobe:tcp_v4_syn_recv_sock", "kprobe:tcp_v6_syn_recv_sock", "END"},
	}
	for _, dir := range []string{debianTools12, debianTools13} {
		for _, tool := range slices.Sorted(maps.Keys(probes)) {
			want := probes[tool]
			file := filepath.Join(dir, tool+".bt")
			t.Run(filepath.Base(dir)+"/"+tool, func(t *testing.T) {
				code, out, errs := runCLI(t, "-d", file)
				var got []string
				for _, m := range dumpProgram.FindAllStringSubmatch(out, -1) {
					got = append(got, m[1])
				}
				if code != 0 || !slices.Equal(got, want) {
					t.Errorf("exit %d, programs loaded %q, want %q\n%s", code, got, want, errs)
				}
			})
		}
	}
}

// TestDebianTcpdropBoth runs trixie's tcpdrop.bt and bookworm's on the
// same drops, one skbtrace inside the other's -c: in a network namespace
// an nftables output rule drops the SYNs to port 9999, from source port
// 46601 (IPv4) and 46602 (IPv6), one SYN each (curl gives up before the
// retransmission at 1 s); a SYN to the closed port 9998 is dropped too,
// but on its way in, with no socket, so neither prints it. Each drop is
// one row (addresses, ports, SYN_SENT) and the kernel stack from the drop
// through nftables to tcp_connect; both print the same, times aside.
func TestDebianTcpdropBoth(t *testing.T) {
	for _, tool := range []string{"nft", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: no traffic to drop", tool)
		}
	}
	dir := t.TempDir()
	ns := fmt.Sprintf("skbdebdrop%d", os.Getpid())
	traffic := filepath.Join(dir, "traffic.sh")
	script := `set -e; ip netns add ` + ns + `; trap 'ip netns del ` + ns + `' EXIT
ip netns exec ` + ns + ` ip link set lo up
ip netns exec ` + ns + ` nft 'add table inet t; add chain inet t o { type filter hook output priority 0; }; add rule inet t o tcp dport 9999 drop'
ip netns exec ` + ns + ` curl -s --local-port 46601 --connect-timeout 0.5 http://127.0.0.1:9999/ || true
ip netns exec ` + ns + ` curl -s --local-port 46602 --connect-timeout 0.5 'http://[::1]:9999/' || true
ip netns exec ` + ns + ` curl -s --local-port 46603 --connect-timeout 0.5 http://127.0.0.1:9998/ || true
`
	if err := os.WriteFile(traffic, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	inner := filepath.Join(dir, "bookworm.out")
	args := strings.Join([]string{"-o", inner, "-c", "sh " + traffic, filepath.Join(debianTools12, "tcpdrop.bt")}, "\x1f")
	code, out, errs := runCLI(t, "-c", "env SKBTRACE_ARGS="+shellQuote(args)+" "+os.Args[0], filepath.Join(debianTools13, "tcpdrop.bt"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	b, err := os.ReadFile(inner)
	if err != nil {
		t.Fatalf("bookworm's tcpdrop.bt wrote nothing: %v\n%s", err, errs)
	}
	trixie, bookworm := tcpdropBlocks(t, "trixie's", out), tcpdropBlocks(t, "bookworm's", string(b))
	if !slices.Equal(trixie, bookworm) {
		t.Errorf("trixie's tcpdrop.bt printed:\n%s\nbookworm's:\n%s", out, b)
	}
}

// stackRe is the stack of an output drop of a SYN by an nftables rule: from
// the drop function (this kernel's: 6.11 and later) to the connect.
var stackRe = regexp.MustCompile(`(?m)\A        sk_skb_reason_drop\+\d+\n(?s:.*)^        nft_do_chain\+\d+\n(?s:.*)^        tcp_connect\+\d+$`)

// tcpdropBlocks checks tcpdrop.bt's output: its header, then for each of
// the test's two dropped SYNs, one row and the stack; it returns them, the
// time taken out, and fails on a row of port 9998.
func tcpdropBlocks(t *testing.T, who, out string) []string {
	t.Helper()
	lines := strings.Split(out, "\n")
	// "Attached 3 probes" is on stderr, as bpftrace 0.26 says it.
	head := []string{"Tracing tcp drops. Hit Ctrl-C to end.",
		fmt.Sprintf("%-8s %-8s %-16s %-21s %-21s %-8s", "TIME", "PID", "COMM", "SADDR:SPORT", "DADDR:DPORT", "STATE")}
	if len(lines) < 2 || !slices.Equal(lines[:2], head) {
		t.Fatalf("%s header:\n%s", who, out)
	}
	row := regexp.MustCompile(`^\d\d:\d\d:\d\d (\d+ +curl +.*)$`)
	var blocks []string
	for _, want := range [][2]string{{"127.0.0.1", "46601"}, {"::1", "46602"}} {
		tail := fmt.Sprintf(" %39s:%-6s %39s:%-6d %-10s", want[0], want[1], want[0], 9999, "SYN_SENT")
		n := 0
		for i, l := range lines {
			m := row.FindStringSubmatch(l)
			if m == nil || !strings.HasSuffix(l, tail) {
				continue
			}
			n++
			// An empty line, then the stack from the drop through
			// nftables to the connect, up to the next empty line.
			var stack []string
			if i+2 < len(lines) && lines[i+1] == "" {
				stack = lines[i+2:]
				if k := slices.Index(stack, ""); k >= 0 {
					stack = stack[:k]
				}
			}
			text := strings.Join(stack, "\n")
			if !stackRe.MatchString(text) {
				t.Errorf("%s: no stack after %q:\n%s", who, l, text)
			}
			blocks = append(blocks, m[1]+"\n"+text)
		}
		if n != 1 {
			t.Errorf("%s: %d rows of the SYN from %s port %s, want 1:\n%s", who, n, want[0], want[1], out)
		}
	}
	if strings.Contains(out, ":9998 ") {
		t.Errorf("%s: a row of the SYN to the closed port, which has no socket:\n%s", who, out)
	}
	return blocks
}
