package main

import (
	"fmt"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestHelperFlood is not a test: run by -c with SKBTRACE_FLOOD set, it sends
// that many datagrams to a closed loopback port, bounded to 20 seconds.
func TestHelperFlood(t *testing.T) {
	n, err := strconv.Atoi(os.Getenv("SKBTRACE_FLOOD"))
	if err != nil {
		t.Skip("helper for TestFloodLosesNothingSilently")
	}
	port, _ := strconv.Atoi(os.Getenv("SKBTRACE_PORT"))
	c, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	dst := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; i < n && time.Now().Before(deadline); i++ {
		if _, err := c.WriteTo([]byte("flood"), dst); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFloodLosesNothingSilently floods skbtrace with one event per packet:
// every packet sent is either printed or counted in the loss report.
func TestFloodLosesNothingSilently(t *testing.T) {
	const sent = 50000
	port := closedUDPPort(t)
	helper := fmt.Sprintf("SKBTRACE_FLOOD=%d SKBTRACE_PORT=%d %s -test.run='^TestHelperFlood$'", sent, port, os.Args[0])
	script := fmt.Sprintf(`tracepoint:skb:kfree_skb /dport == %d/ { printf("%%u\n", len) }`, port)
	code, out, errs := runCLI(t, "-e", script, "-c", helper)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	printed := strings.Count(out, "13\n")
	lost := 0
	if m := regexp.MustCompile(`(\d+) events lost`).FindStringSubmatch(errs); m != nil {
		lost, _ = strconv.Atoi(m[1])
	}
	if printed+lost != sent {
		t.Errorf("sent %d, printed %d, reported lost %d", sent, printed, lost)
	}
	t.Logf("sent %d: printed %d, lost %d", sent, printed, lost)
}
