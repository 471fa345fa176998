package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"time"
)

// tcpSessions listens on ADDR:PORT and makes N connections to it from the same
// process, each a whole session: the client sends -send bytes, the server
// reads them and replies -reply bytes, the client reads those and closes
// first, the server reads the end and closes. With -sport P the clients
// connect from ports P, P+1, ... so a case can name every port. With -abort
// the server reads one byte and closes with the rest unread, which makes the
// kernel reset the connection. It returns the exit status.
func tcpSessions(args []string) int {
	fs := flag.NewFlagSet("tcp", flag.ExitOnError)
	n := fs.Int("n", 1, "how many sessions, one after another")
	sport := fs.Int("sport", 0, "the first client port (0: the kernel picks)")
	sendN := fs.Int("send", 0, "bytes the client sends")
	replyN := fs.Int("reply", 0, "bytes the server replies")
	abort := fs.Bool("abort", false, "the server reads one byte and closes with the rest unread (a reset)")
	netns := fs.String("netns", "", "listen in the network namespace of this file (unshare --net=FILE), the client staying here")
	to := fs.String("to", "", "the client connects to this ADDR:PORT, which NAT takes to the listener's (default: the listener's)")
	fs.Parse(args)
	if fs.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "vmtool tcp: ADDR:PORT")
		return 2
	}
	if *abort && *sendN < 2 {
		fmt.Fprintln(os.Stderr, "vmtool tcp: -abort needs -send 2 or more (one byte read, the rest unread)")
		return 2
	}
	addr := fs.Arg(0)
	ln, err := listenIn(*netns, addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "vmtool tcp: listen %s: %v\n", addr, err)
		return 1
	}
	defer ln.Close()
	for i := 0; i < *n; i++ {
		d := net.Dialer{Timeout: 2 * time.Second}
		if *sport != 0 {
			host, _, _ := net.SplitHostPort(addr)
			d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(host), Port: *sport + i}
		}
		dial := ln.Addr().String()
		if *to != "" {
			dial = *to
		}
		if err := session(ln, d, dial, *sendN, *replyN, *abort); err != nil {
			fmt.Fprintf(os.Stderr, "vmtool tcp: session %d with %s: %v\n", i+1, addr, err)
			return 1
		}
	}
	return 0
}

// session runs one connection of tcpSessions, bounded by a deadline.
func session(ln net.Listener, d net.Dialer, dial string, sendN, replyN int, abort bool) error {
	deadline := time.Now().Add(5 * time.Second)
	accepted := make(chan net.Conn, 1)
	acceptErr := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			acceptErr <- err
			return
		}
		accepted <- c
	}()
	client, err := d.Dial("tcp", dial)
	if err != nil {
		return err
	}
	defer client.Close()
	client.SetDeadline(deadline)
	var server net.Conn
	select {
	case server = <-accepted:
	case err := <-acceptErr:
		return err
	case <-time.After(time.Until(deadline)):
		return fmt.Errorf("accept timed out")
	}
	defer server.Close()
	server.SetDeadline(deadline)
	if _, err := client.Write(stream(sendN)); err != nil {
		return fmt.Errorf("client write: %w", err)
	}
	if abort {
		if _, err := io.ReadFull(server, make([]byte, 1)); err != nil {
			return fmt.Errorf("server read: %w", err)
		}
		server.Close()
		// The client sees the reset when it reads.
		client.Read(make([]byte, 1))
		return nil
	}
	if _, err := io.ReadFull(server, make([]byte, sendN)); err != nil {
		return fmt.Errorf("server read: %w", err)
	}
	if _, err := server.Write(make([]byte, replyN)); err != nil {
		return fmt.Errorf("server write: %w", err)
	}
	if _, err := io.ReadFull(client, make([]byte, replyN)); err != nil {
		return fmt.Errorf("client read: %w", err)
	}
	client.Close()
	if n, err := server.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		return fmt.Errorf("server: want the end of the stream, got %d bytes, %v", n, err)
	}
	return nil
}

// backlog listens on ADDR:PORT with a backlog of -limit and never accepts;
// N clients connect (their handshakes complete in the kernel, which queues
// them on the listener) and then all close. It returns the exit status.
func backlog(args []string) int {
	fs := flag.NewFlagSet("backlog", flag.ExitOnError)
	limit := fs.Int("limit", 2, "listen(2)'s backlog")
	n := fs.Int("n", 1, "how many clients connect")
	fs.Parse(args)
	if fs.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "vmtool backlog: IPV4ADDR:PORT")
		return 2
	}
	host, portS, err := net.SplitHostPort(fs.Arg(0))
	ip := net.ParseIP(host).To4()
	port, perr := strconv.Atoi(portS)
	if err != nil || ip == nil || perr != nil {
		fmt.Fprintf(os.Stderr, "vmtool backlog: %q: an IPv4 address and a port\n", fs.Arg(0))
		return 2
	}
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		fmt.Fprintf(os.Stderr, "vmtool backlog: socket: %v\n", err)
		return 1
	}
	defer syscall.Close(fd)
	sa := &syscall.SockaddrInet4{Port: port}
	copy(sa.Addr[:], ip)
	syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1)
	if err := syscall.Bind(fd, sa); err != nil {
		fmt.Fprintf(os.Stderr, "vmtool backlog: bind %s: %v\n", fs.Arg(0), err)
		return 1
	}
	if err := syscall.Listen(fd, *limit); err != nil {
		fmt.Fprintf(os.Stderr, "vmtool backlog: listen: %v\n", err)
		return 1
	}
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	d := net.Dialer{Timeout: 2 * time.Second}
	for i := 0; i < *n; i++ {
		c, err := d.Dial("tcp", fs.Arg(0))
		if err != nil {
			fmt.Fprintf(os.Stderr, "vmtool backlog: client %d: %v\n", i+1, err)
			return 1
		}
		conns = append(conns, c)
	}
	return 0
}

// stream is what a client sends: streamByte's pattern, which pcapcheck
// finds again in skbtrace's capture.
func stream(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = streamByte(uint32(i))
	}
	return b
}

// listenIn listens on addr in the network namespace of file (none: here):
// the listening thread enters it and comes back; the socket stays there.
func listenIn(file, addr string) (net.Listener, error) {
	if file == "" {
		return net.Listen("tcp", addr)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	here, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		return nil, err
	}
	defer here.Close()
	there, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer there.Close()
	if _, _, e := syscall.Syscall(sysSetns(), there.Fd(), syscall.CLONE_NEWNET, 0); e != 0 {
		return nil, fmt.Errorf("setns %s: %w", file, e)
	}
	ln, lerr := net.Listen("tcp", addr)
	if _, _, e := syscall.Syscall(sysSetns(), here.Fd(), syscall.CLONE_NEWNET, 0); e != 0 {
		// The thread would stay in the other namespace.
		fmt.Fprintf(os.Stderr, "vmtool tcp: back from %s: %v\n", file, e)
		os.Exit(1)
	}
	return ln, lerr
}

// sysSetns is setns(2)'s number, which package syscall does not name.
func sysSetns() uintptr {
	if runtime.GOARCH == "arm64" {
		return 268
	}
	return 308 // amd64
}
