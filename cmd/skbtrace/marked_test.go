package main

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestHelperSendMarked is not a test: run by -c with SKBTRACE_SEND_MARKED
// set, it sends that many datagrams marked 0xdeadbeef (SO_MARK) to a closed
// loopback port, and as many unmarked ones.
func TestHelperSendMarked(t *testing.T) {
	n, err := strconv.Atoi(os.Getenv("SKBTRACE_SEND_MARKED"))
	if err != nil {
		t.Skip("helper for TestSpecOneLiner")
	}
	port, _ := strconv.Atoi(os.Getenv("SKBTRACE_PORT"))
	dst := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}
	for _, mark := range []int{0xdeadbeef, 0} {
		c, err := net.ListenPacket("udp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := c.(*net.UDPConn).SyscallConn()
		var serr error
		raw.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_MARK, mark)
		})
		if serr != nil {
			t.Fatal(serr)
		}
		for i := 0; i < n; i++ {
			if _, err := c.WriteTo([]byte("marked!"), dst); err != nil {
				t.Fatal(err)
			}
		}
		c.Close()
	}
}

// TestSpecOneLiner runs SPEC.md's one-liner exactly as written, on packets
// marked 0xdeadbeef and on unmarked ones: only the marked packets print,
// one line for each tracepoint they pass, with their length and device.
func TestSpecOneLiner(t *testing.T) {
	const sent = 2
	port := closedUDPPort(t)
	helper := fmt.Sprintf("SKBTRACE_SEND_MARKED=%d SKBTRACE_PORT=%d %s -test.run='^TestHelperSendMarked$'", sent, port, os.Args[0])
	code, out, errs := runCLI(t, "-e", "skb:* /mark==0xdeadbeef/ < print(len, dev) >", "-c", helper)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "tracepoints that carry an sk_buff") {
		t.Errorf("the fallback is not announced: %q", errs)
	}
	// Each marked datagram is dropped at kfree_skb (no socket on the port):
	// 8 bytes of UDP header and 7 of payload are left then.
	var drops int
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasSuffix(line, " dev=lo") {
			t.Errorf("unexpected line %q", line)
		}
		if strings.Contains(line, " kfree_skb ") {
			drops++
			if !strings.Contains(line, " len=15 dev=lo") {
				t.Errorf("drop line %q: want len=15", line)
			}
		}
	}
	if drops != sent {
		t.Errorf("%d drops printed, want %d (only marked packets):\n%s", drops, sent, out)
	}
}
