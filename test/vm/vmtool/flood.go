package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"time"
)

// flood sends N datagrams to one address from one unconnected socket, as
// fast as it goes, and says how long that took: the sender of bench/vm's
// per-packet costs (send opens a socket per datagram, which costs more
// than the tracing it measures). A closed port's ICMP errors do not stop
// it: an unconnected socket is not told of them.
func flood(args []string) int {
	fs := flag.NewFlagSet("flood", flag.ExitOnError)
	n := fs.Int("n", 20000, "how many datagrams")
	fs.Parse(args)
	if fs.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "vmtool flood: [-n N] ADDR:PORT")
		return 2
	}
	to, err := net.ResolveUDPAddr("udp", fs.Arg(0))
	if err != nil {
		fmt.Fprintf(os.Stderr, "vmtool flood: %v\n", err)
		return 2
	}
	c, err := net.ListenUDP("udp", nil)
	if err != nil {
		fmt.Fprintf(os.Stderr, "vmtool flood: %v\n", err)
		return 1
	}
	defer c.Close()
	payload := []byte("flood")
	start := time.Now()
	for range *n {
		if _, err := c.WriteToUDP(payload, to); err != nil {
			fmt.Fprintf(os.Stderr, "vmtool flood: %v\n", err)
			return 1
		}
	}
	fmt.Printf("%d datagrams in %.3f s\n", *n, time.Since(start).Seconds())
	return 0
}
