package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// tsharkFields reads a pcapng file (or stdin's bytes) with tshark and
// returns each frame's fields.
func tsharkFields(t *testing.T, file string, stdin []byte, fields ...string) [][]string {
	t.Helper()
	args := []string{"-r", file, "-T", "fields", "-E", "separator=|"}
	for _, f := range fields {
		args = append(args, "-e", f)
	}
	cmd := exec.Command("tshark", args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tshark %v: %v: %s", args, err, stderr.String())
	}
	var rows [][]string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line != "" {
			rows = append(rows, strings.Split(line, "|"))
		}
	}
	return rows
}

var commentRE = regexp.MustCompile(`^([a-z_0-9]+) skb=0x[0-9a-f]+ mark=0x[0-9a-f]+ netns=([0-9]+)(?: packet=0x[0-9a-f]+)?(?: netns-name=skbt\w+)?$`)

// TestWritePcapng traces datagrams with --filter and -w, and reads the
// file back with tshark and tcpdump: a frame per hop, each with a comment
// naming the hop, the skb, mark and namespace, on an interface named after
// the device, with the addresses, ports and payload that were sent; at
// --snaplen the frames are cut, their length kept; -w - streams the same
// to a pipe; capture() in a script writes only the frames it is called for.
func TestWritePcapng(t *testing.T) {
	ns1, _, inum2 := vethPair(t, 7)
	const sent, size = 2, 20
	send := "ip netns exec " + ns1 + " " + sendCommand("10.200.7.2:4751", sent, size, 0)
	file := filepath.Join(t.TempDir(), "hops.pcapng")
	code, _, errs := runCLI(t, "--filter", "udp dst port 4751", "-w", file, "-c", send)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	rows := tsharkFields(t, file, nil, "frame.comment", "frame.interface_name", "ip.src", "ip.dst", "udp.dstport", "udp.payload", "frame.len", "frame.cap_len")
	hops := map[string]int{}
	for _, r := range rows {
		m := commentRE.FindStringSubmatch(r[0])
		if m == nil {
			t.Errorf("frame comment %q", r[0])
			continue
		}
		hops[m[1]]++
		if r[1] == "v2" && m[2] != strconv.FormatUint(inum2, 10) {
			t.Errorf("%s on v2 in netns %s, want %d", m[1], m[2], inum2)
		}
		want := []string{"10.200.7.1", "10.200.7.2", "4751", strings.Repeat("00", size), strconv.Itoa(14 + 20 + 8 + size), strconv.Itoa(14 + 20 + 8 + size)}
		if got := r[2:]; strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s frame: %v, want %v", m[1], got, want)
		}
	}
	for _, h := range []string{"net_dev_queue", "net_dev_start_xmit", "netif_receive_skb", "kfree_skb"} {
		if hops[h] != sent {
			t.Errorf("%d %s frames, want %d (%v)", hops[h], h, sent, hops)
		}
	}
	out, err := exec.Command("tcpdump", "-r", file, "-nn", "udp dst port 4751 and src host 10.200.7.1").Output()
	if n := strings.Count(string(out), "\n"); err != nil || n != len(rows) {
		t.Errorf("tcpdump -r read %d frames, tshark %d (%v):\n%s", n, len(rows), err, out)
	}

	// A snap length cuts the frames and keeps their length; -w - streams.
	code, stream, errs := runCLI(t, "--filter", "udp dst port 4751", "-w", "-", "--snaplen", "40", "-c", send)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	rows = tsharkFields(t, "-", []byte(stream), "frame.len", "frame.cap_len", "frame.comment")
	if len(rows) < 4*sent {
		t.Errorf("-w - gave %d frames", len(rows))
	}
	for _, r := range rows {
		if r[0] != strconv.Itoa(14+20+8+size) || r[1] != "40" || !commentRE.MatchString(r[2]) {
			t.Errorf("--snaplen 40 frame: %v", r)
		}
	}

	// capture() in a script: only where it is called.
	// printf's %s of pkt is tcpdump's line.
	code, printed, errs := runCLI(t, "-e", `tracepoint:net:net_dev_queue /pcap("udp dst port 4751")/ { capture(); printf("%s\n", pkt) }`, "-w", file, "-c", send)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	pktLine := regexp.MustCompile(`^IP 10\.200\.7\.1\.\d+ > 10\.200\.7\.2\.4751: UDP, length 20$`)
	if lines := strings.Split(strings.TrimSpace(printed), "\n"); len(lines) != sent || !pktLine.MatchString(lines[0]) || !pktLine.MatchString(lines[1]) {
		t.Errorf("printf of pkt printed:\n%s", printed)
	}
	rows = tsharkFields(t, file, nil, "frame.comment", "udp.payload")
	if len(rows) != sent {
		t.Fatalf("capture() wrote %d frames, want %d: %v", len(rows), sent, rows)
	}
	for _, r := range rows {
		if m := commentRE.FindStringSubmatch(r[0]); m == nil || m[1] != "net_dev_queue" || r[1] != strings.Repeat("00", size) {
			t.Errorf("capture() frame %v", r)
		}
	}
}
