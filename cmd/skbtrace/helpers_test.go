package main

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain lets the tests run this binary as a helper process: with
// SKBTRACE_SEND set it sends datagrams (for skbtrace's -c), with
// SKBTRACE_ARGS it runs the CLI (so a test can measure it as a child).
func TestMain(m *testing.M) {
	if spec := os.Getenv("SKBTRACE_SEND"); spec != "" {
		if err := send(spec); err != nil {
			fmt.Fprintln(os.Stderr, "send:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if args := os.Getenv("SKBTRACE_ARGS"); args != "" {
		os.Exit(run(strings.Split(args, "\x1f"), os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
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
