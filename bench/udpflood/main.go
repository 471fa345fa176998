// Command udpflood sends UDP datagrams to a port on loopback, as fast as it
// can, bounded in count and time, and reports its rate. The benchmarks use
// it as a traffic source whose speed shows a tracer's per-packet cost.
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"time"
)

func main() {
	n := flag.Int("n", 100000, "datagrams to send")
	port := flag.Int("port", 9, "destination port on 127.0.0.1 (use a closed one: each datagram is then dropped)")
	limit := flag.Duration("max", 20*time.Second, "stop after this long whatever the count")
	size := flag.Int("size", 5, "payload bytes")
	flows := flag.Int("flows", 1, "sockets (source ports) the datagrams take turns from: a flow each")
	flag.Parse()
	conns := make([]net.PacketConn, max(*flows, 1))
	for i := range conns {
		c, err := net.ListenPacket("udp4", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer c.Close()
		conns[i] = c
	}
	dst := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: *port}
	buf := make([]byte, *size)
	start := time.Now()
	deadline := start.Add(*limit)
	sent := 0
	for sent < *n && (sent%1024 != 0 || time.Now().Before(deadline)) {
		if _, err := conns[sent%len(conns)].WriteTo(buf, dst); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		sent++
	}
	d := time.Since(start)
	fmt.Printf("sent %d in %v: %.0f pps\n", sent, d.Round(time.Millisecond), float64(sent)/d.Seconds())
}
