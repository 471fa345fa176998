package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// send sends UDP datagrams, or makes TCP connections, to one address, with
// SO_MARK set when -mark is given: the traffic of the cases, with a mark that a
// predicate can select. It returns the exit status: 1 if any send failed.
func send(args []string) int {
	fs := flag.NewFlagSet("send", flag.ExitOnError)
	mark := fs.String("mark", "", "SO_MARK of the socket (e.g. 0xdeadbeef)")
	n := fs.Int("n", 1, "how many datagrams or connections")
	tcp := fs.Bool("tcp", false, "connect with TCP instead of sending a UDP datagram")
	sport := fs.Int("sport", 0, "the first source port, then +1 each (0: the kernel picks)")
	saddr := fs.String("saddr", "", "the source address -sport binds (default: the destination's, for loopback)")
	timeout := fs.Duration("timeout", 2*time.Second, "how long a TCP connect waits for an answer")
	size := fs.Int("size", 0, "a datagram of this many bytes ('x') instead of PAYLOAD")
	fs.Parse(args)
	if fs.NArg() < 1 || fs.NArg() > 2 {
		fmt.Fprintln(os.Stderr, "vmtool send: ADDR:PORT [PAYLOAD]")
		return 2
	}
	addr, payload := fs.Arg(0), "hello"
	if fs.NArg() == 2 {
		payload = fs.Arg(1)
	}
	if *size > 0 {
		payload = strings.Repeat("x", *size)
	}
	d := net.Dialer{Timeout: *timeout}
	if *mark != "" {
		m, err := strconv.ParseUint(*mark, 0, 32)
		if err != nil {
			fmt.Fprintf(os.Stderr, "vmtool send: -mark %q: %v\n", *mark, err)
			return 2
		}
		d.Control = func(_, _ string, c syscall.RawConn) error {
			var serr error
			if err := c.Control(func(fd uintptr) {
				serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_MARK, int(int32(uint32(m))))
			}); err != nil {
				return err
			}
			return serr
		}
	}
	network := "udp"
	if *tcp {
		network = "tcp"
	}
	failed := 0
	host, _, _ := net.SplitHostPort(addr)
	if *saddr != "" {
		host = *saddr
	}
	for i := 0; i < *n; i++ {
		if *sport != 0 {
			if *tcp {
				d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(host), Port: *sport + i}
			} else {
				d.LocalAddr = &net.UDPAddr{IP: net.ParseIP(host), Port: *sport + i}
			}
		}
		c, err := d.Dial(network, addr)
		if err != nil {
			// A TCP connect to a closed port is refused, one to an address
			// that does not answer times out: that is the traffic some
			// cases want. Anything else (a port still in use) is a failure.
			var ne net.Error
			if !*tcp || !(errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &ne) && ne.Timeout()) {
				fmt.Fprintf(os.Stderr, "vmtool send: %s %s: %v\n", network, addr, err)
				failed++
			}
			continue
		}
		if !*tcp {
			if _, err := c.Write([]byte(payload)); err != nil {
				fmt.Fprintf(os.Stderr, "vmtool send: write to %s: %v\n", addr, err)
				failed++
			}
		}
		c.Close()
	}
	if failed > 0 {
		return 1
	}
	return 0
}
