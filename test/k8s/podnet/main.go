// Command podnet is the one binary of the test images that
// internal/k8stest builds: the pause image runs "podnet pause", the test
// image runs whichever subcommand a test gives, so that two pods can talk.
// It is static (CGO_ENABLED=0) and the image holds nothing else.
//
//	podnet sleep | pause           wait for SIGTERM or SIGINT, exit 0
//	podnet udp-serve PORT          print each datagram received on PORT
//	podnet udp-send ADDR:PORT N    send N datagrams, 10 ms apart
//	podnet tcp-serve PORT          accept on PORT, print what each peer sends
//	podnet tcp-send ADDR:PORT N    connect, send N lines, 10 ms apart
//
// Destinations are what the test passes: pod IPs or loopback, never
// anything beyond the machine. Every send is bounded by its count.
package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

const maxCount = 100000

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	// As PID 1 of a container a process ignores SIGTERM unless it
	// handles it: every subcommand ends on it at once.
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() { <-stop; os.Exit(0) }()
	var err error
	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "sleep", "pause":
		select {}
	case "udp-serve":
		err = udpServe(port(args))
	case "udp-send":
		addr, n := dest(args)
		err = udpSend(addr, n)
	case "tcp-serve":
		err = tcpServe(port(args))
	case "tcp-send":
		addr, n := dest(args)
		err = tcpSend(addr, n)
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "podnet:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: podnet sleep|pause | udp-serve PORT | udp-send ADDR:PORT COUNT | tcp-serve PORT | tcp-send ADDR:PORT COUNT")
	os.Exit(2)
}

func port(args []string) string {
	if len(args) != 1 {
		usage()
	}
	if _, err := strconv.ParseUint(args[0], 10, 16); err != nil {
		usage()
	}
	return ":" + args[0]
}

func dest(args []string) (string, int) {
	if len(args) != 2 {
		usage()
	}
	n, err := strconv.Atoi(args[1])
	if err != nil || n < 0 || n > maxCount {
		usage()
	}
	return args[0], n
}

func udpServe(addr string) error {
	c, err := net.ListenPacket("udp", addr)
	if err != nil {
		return err
	}
	buf := make([]byte, 65536)
	for {
		n, from, err := c.ReadFrom(buf)
		if err != nil {
			return err
		}
		fmt.Printf("udp %s %q\n", from, buf[:n])
	}
}

func udpSend(addr string, n int) error {
	c, err := net.Dial("udp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	return sendEach(c, n, "podnet %d")
}

// sendEach writes n messages of format (with their number) to c, 10 ms
// apart.
func sendEach(c net.Conn, n int, format string) error {
	for i := 0; i < n; i++ {
		if i > 0 {
			time.Sleep(10 * time.Millisecond)
		}
		if _, err := fmt.Fprintf(c, format, i); err != nil {
			return err
		}
	}
	return nil
}

func tcpServe(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	for {
		c, err := l.Accept()
		if err != nil {
			return err
		}
		go func() {
			defer c.Close()
			s := bufio.NewScanner(c)
			for s.Scan() {
				fmt.Printf("tcp %s %q\n", c.RemoteAddr(), s.Text())
			}
		}()
	}
}

func tcpSend(addr string, n int) error {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	return sendEach(c, n, "podnet %d\n")
}
