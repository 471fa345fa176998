package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// connectCommand is a -c command: this test binary listens on addr, then
// connects to it n times, sending size bytes each time and closing.
func connectCommand(addr string, n, size int) string {
	return fmt.Sprintf("env SKBTRACE_CONNECT=%s,%d,%d %s", addr, n, size, os.Args[0])
}

// connectLoop implements connectCommand, bounded to 20 seconds.
func connectLoop(spec string) error {
	f := strings.Split(spec, ",")
	if len(f) != 3 {
		return fmt.Errorf("bad SKBTRACE_CONNECT %q", spec)
	}
	n, _ := strconv.Atoi(f[1])
	size, _ := strconv.Atoi(f[2])
	l, err := net.Listen("tcp", f[0])
	if err != nil {
		return err
	}
	defer l.Close()
	got := make(chan int, n)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.SetDeadline(time.Now().Add(20 * time.Second))
			b, _ := io.Copy(io.Discard, c)
			c.Close()
			got <- int(b)
		}
	}()
	for range n {
		c, err := net.DialTimeout("tcp", f[0], 5*time.Second)
		if err != nil {
			return err
		}
		c.Write(make([]byte, size))
		c.Close()
		select {
		case <-got:
		case <-time.After(20 * time.Second):
			return fmt.Errorf("the server did not see the connection close")
		}
	}
	return nil
}

// TestTCPSessionTools runs tcpconnect, tcpaccept, tcplife and tcpsynbl on
// real loopback connections (IPv4 and IPv6) and checks each connection's
// line.
func TestTCPSessionTools(t *testing.T) {
	for _, ip := range []string{"127.0.0.1", "::1"} {
		port := closedTCPPort(t)
		addr := net.JoinHostPort(ip, strconv.Itoa(port))
		cmd := connectCommand(addr, 2, 3000)
		p := strconv.Itoa(port)
		ipq := regexp.QuoteMeta(ip)

		code, out, errs := runCLI(t, "-c", cmd, "tcpconnect")
		re := regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d (\d+) +skbtrace\.test +` + ipq + ` +(\d+) +` + ipq + ` +` + p + ` +ESTABLISHED$`)
		if m := re.FindAllStringSubmatch(out, -1); code != 0 || len(m) != 2 || m[0][1] == strconv.Itoa(os.Getpid()) {
			t.Errorf("tcpconnect to %s: exit %d, want 2 lines from the helper:\n%s\n%s", addr, code, out, errs)
		}

		code, out, errs = runCLI(t, "-c", cmd, "tcpaccept")
		re = regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d ` + ipq + ` +\d+ +` + ipq + ` +` + p + ` *$`)
		if code != 0 || len(re.FindAllString(out, -1)) != 2 {
			t.Errorf("tcpaccept on %s: exit %d, want 2 lines:\n%s\n%s", addr, code, out, errs)
		}

		// Both ends of each connection close: four sessions, the client's
		// having sent 3000 bytes (2 KB), the server's having received them.
		code, out, errs = runCLI(t, "-c", cmd, "tcplife")
		client := regexp.MustCompile(`(?m)^\d+ +skbtrace\.test +` + ipq + ` +\d+ +` + ipq + ` +` + p + ` +2 +0 +\d+$`)
		server := regexp.MustCompile(`(?m)^\d+ +\S+ +` + ipq + ` +` + p + ` +` + ipq + ` +\d+ +0 +2 +\d+$`)
		if code != 0 || len(client.FindAllString(out, -1)) != 2 || len(server.FindAllString(out, -1)) != 2 {
			t.Errorf("tcplife on %s: exit %d, want 2 client and 2 server sessions:\n%s\n%s", addr, code, out, errs)
		}

		// Two connections queued, each alone: in the [1] bucket of the
		// listener's limit (Go's listen backlog is somaxconn, 4096), or
		// [0] where the server, on the other CPU, accepted it before the
		// tracepoint read the queue's length.
		code, out, errs = runCLI(t, "-c", cmd, "tcpsynbl")
		queued := 0
		for _, m := range regexp.MustCompile(`(?m)^\[([01])\] +(\d+) \|@+ *\|$`).FindAllStringSubmatch(out, -1) {
			n, _ := strconv.Atoi(m[2])
			queued += n
		}
		if code != 0 || !regexp.MustCompile(`(?m)^@backlog\[\d+\]:\n\[[01]\] `).MatchString(out) || queued != 2 {
			t.Errorf("tcpsynbl on %s: exit %d, %d connections queued alone, want 2:\n%s\n%s", addr, code, queued, out, errs)
		}
	}
}
