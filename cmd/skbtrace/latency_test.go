package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRareEventsPrintAtOnce checks that buffered output still shows each
// line while skbtrace runs, before the next event and long before exit:
// one datagram, its line; another, its line.
func TestRareEventsPrintAtOnce(t *testing.T) {
	port := closedUDPPort(t)
	script := fmt.Sprintf(`tracepoint:skb:kfree_skb /dport == %d/ { printf("drop %%u\n", len) }`, port)
	for _, events := range []string{"ringbuf", "perf"} {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "SKBTRACE_ARGS="+strings.Join([]string{"-e", script, "--events", events}, "\x1f"))
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// A failed check must not leave skbtrace attached (or holding the
		// test's inherited lock).
		t.Cleanup(func() { cmd.Process.Kill() })
		lines := make(chan string, 8)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		attached := make(chan struct{})
		go func() {
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				if strings.Contains(sc.Text(), "tracing 1 probe") {
					close(attached)
				}
			}
		}()
		wait := func(what string, ch <-chan struct{}) {
			select {
			case <-ch:
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: no %s within 10 s", events, what)
			}
		}
		wait("attach", attached)
		// Unconnected: the ICMP error of the closed port does not fail the next write.
		c, err := net.ListenPacket("udp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		dst := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}
		for i := range 2 {
			if _, err := c.WriteTo([]byte("abcde"), dst); err != nil {
				t.Fatal(err)
			}
			got := make(chan struct{})
			go func() {
				if l, ok := <-lines; ok && l == "drop 13" {
					close(got)
				}
			}()
			wait(fmt.Sprintf("line for datagram %d while running", i+1), got)
		}
		c.Close()
		cmd.Process.Signal(syscall.SIGINT)
		if err := cmd.Wait(); err != nil {
			t.Errorf("%s: %v", events, err)
		}
	}
}
