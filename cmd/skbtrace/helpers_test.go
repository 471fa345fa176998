package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skbtrace/skbtrace/runtime/session"
)

// TestMain lets the tests run this binary as a helper process: with
// SKBTRACE_SEND set it sends datagrams (for skbtrace's -c), with
// SKBTRACE_SERVE or SKBTRACE_STALL it plays a TCP peer that goes silent or
// its client, with SKBTRACE_ARGS it runs the CLI (so a test can measure it
// as a child); started by a session to close its links, it does that.
func TestMain(m *testing.M) {
	if session.DetachHelper() {
		return
	}
	for _, h := range []struct {
		env string
		run func(spec string) error
	}{
		{"SKBTRACE_SEND", send},
		{"SKBTRACE_SERVE", serveThenDrop},
		{"SKBTRACE_STALL", stall},
		{"SKBTRACE_CONNECT", connectLoop},
		{"SKBTRACE_INJECT", inject},
		{"SKBTRACE_RAW", sendRaw},
		{"SKBTRACE_SINK", sink},
		{"SKBTRACE_BULK", bulkWrite},
		{"SKBTRACE_GENEVE", sendGeneve},
	} {
		if spec := os.Getenv(h.env); spec != "" {
			if err := h.run(spec); err != nil {
				fmt.Fprintf(os.Stderr, "%s: %v\n", h.env, err)
				os.Exit(1)
			}
			os.Exit(0)
		}
	}
	if args := os.Getenv("SKBTRACE_ARGS"); args != "" {
		notifySignals()
		os.Exit(run(strings.Split(args, "\x1f"), os.Stdout, os.Stderr))
	}
	// A test's links are closed before the next test starts: a teardown
	// left to a helper would slow the next test's attaching and detaching
	// (the kernel serializes them). TestDetachInBackground unsets it.
	os.Setenv(session.DetachEnv, "wait")
	code := m.Run()
	if builtBin != "" {
		os.RemoveAll(filepath.Dir(builtBin))
	}
	os.Exit(code)
}

// sendCommand is a shell command, for -c, that sends count UDP datagrams of
// size bytes to addr (host:port), each with the firewall mark (SO_MARK).
func sendCommand(addr string, count, size int, mark uint32) string {
	return fmt.Sprintf("env SKBTRACE_SEND=%s,%d,%d,%d %s", addr, count, size, mark, os.Args[0])
}

// send implements sendCommand, bounded to 20 seconds.
func send(spec string) error {
	f := strings.Split(spec, ",")
	if len(f) != 4 {
		return fmt.Errorf("bad SKBTRACE_SEND %q", spec)
	}
	count, _ := strconv.Atoi(f[1])
	size, _ := strconv.Atoi(f[2])
	mark, _ := strconv.ParseUint(f[3], 10, 32)
	// Unconnected, so that the ICMP a closed port answers with does not
	// fail the next write.
	dst, err := net.ResolveUDPAddr("udp", f[0])
	if err != nil {
		return err
	}
	network := "udp4"
	if dst.IP.To4() == nil {
		network = "udp6"
	}
	c, err := net.ListenPacket(network, ":0")
	if err != nil {
		return err
	}
	defer c.Close()
	if mark != 0 {
		raw, _ := c.(*net.UDPConn).SyscallConn()
		var serr error
		raw.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_MARK, int(mark))
		})
		if serr != nil {
			return serr
		}
	}
	buf := make([]byte, size)
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; i < count && time.Now().Before(deadline); i++ {
		if _, err := c.WriteTo(buf, dst); err != nil {
			return err
		}
	}
	return nil
}

// acceptOne accepts one TCP connection on addr, waiting at most 10 seconds.
func acceptOne(addr string) (net.Conn, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	l.(*net.TCPListener).SetDeadline(time.Now().Add(10 * time.Second))
	return l.Accept()
}

// serveThenDrop accepts one TCP connection on addr (host:port), then stops
// answering: an nftables rule drops what the peer sends to the port. It
// holds the connection for at most 10 seconds. Run it in the receiver's
// namespace.
func serveThenDrop(addr string) error {
	c, err := acceptOne(addr)
	if err != nil {
		return err
	}
	defer c.Close()
	_, port, _ := net.SplitHostPort(addr)
	for _, rule := range []string{
		"add table inet skbtrace_test",
		"add chain inet skbtrace_test in { type filter hook input priority 0 ; policy accept ; }",
		"add rule inet skbtrace_test in tcp dport " + port + " drop",
	} {
		if out, err := exec.Command("nft", strings.Fields(rule)...).CombinedOutput(); err != nil {
			return fmt.Errorf("nft %s: %v: %s", rule, err, out)
		}
	}
	time.Sleep(10 * time.Second)
	return nil
}

// stall connects to addr, waits for the peer to stop answering, sends 100
// bytes, and keeps the connection for hold milliseconds while TCP
// retransmits. It writes the kernel's RetransSegs count over that time
// (from /proc/net/snmp) and its own address to the file out.
func stall(spec string) error {
	f := strings.Split(spec, ",")
	if len(f) != 3 {
		return fmt.Errorf("bad SKBTRACE_STALL %q", spec)
	}
	hold, _ := strconv.Atoi(f[1])
	c, err := net.DialTimeout("tcp", f[0], 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	time.Sleep(300 * time.Millisecond) // the peer installs its drop rule
	before, err := retransSegs()
	if err != nil {
		return err
	}
	if _, err := c.Write(make([]byte, 100)); err != nil {
		return err
	}
	time.Sleep(time.Duration(hold) * time.Millisecond)
	after, err := retransSegs()
	if err != nil {
		return err
	}
	// Closed with a reset, the socket retransmits no more: none can be
	// traced after the count was read.
	c.(*net.TCPConn).SetLinger(0)
	return os.WriteFile(f[2], []byte(fmt.Sprintf("%d %s", after-before, c.LocalAddr())), 0o644)
}

// retransSegs reads Tcp: RetransSegs from /proc/net/snmp.
func retransSegs() (int, error) {
	b, err := os.ReadFile("/proc/net/snmp")
	if err != nil {
		return 0, err
	}
	var names []string
	for _, line := range strings.Split(string(b), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || fields[0] != "Tcp:" {
			continue
		}
		if names == nil {
			names = fields
			continue
		}
		for i, n := range names {
			if n == "RetransSegs" && i < len(fields) {
				return strconv.Atoi(fields[i])
			}
		}
	}
	return 0, fmt.Errorf("no RetransSegs in /proc/net/snmp")
}
