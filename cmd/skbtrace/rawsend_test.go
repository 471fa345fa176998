package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// rawCommand is a shell command, for -c, that sends one hand-made IPv4
// packet to dst with a raw socket: "tcp,PORT,SEQ,ACK,WIN,FLAGS" (a TCP
// segment from port 40000) or "icmp,ID,SEQ" (an echo request).
func rawCommand(dst, spec string) string {
	return fmt.Sprintf("env SKBTRACE_RAW=%s,%s %s", dst, spec, os.Args[0])
}

// sendRaw implements rawCommand.
func sendRaw(spec string) error {
	f := strings.Split(spec, ",")
	num := func(i int) uint32 {
		v, _ := strconv.ParseUint(f[i], 0, 32)
		return uint32(v)
	}
	if len(f) < 2 {
		return fmt.Errorf("bad SKBTRACE_RAW %q", spec)
	}
	dst := net.ParseIP(f[0]).To4()
	var proto int
	var msg []byte
	switch {
	case f[1] == "tcp" && len(f) == 7:
		proto = syscall.IPPROTO_TCP
		msg = make([]byte, 20)
		binary.BigEndian.PutUint16(msg[0:], 40000)
		binary.BigEndian.PutUint16(msg[2:], uint16(num(2)))
		binary.BigEndian.PutUint32(msg[4:], num(3))
		binary.BigEndian.PutUint32(msg[8:], num(4))
		msg[12] = 5 << 4
		msg[13] = byte(num(6))
		binary.BigEndian.PutUint16(msg[14:], uint16(num(5)))
		// The checksum covers a pseudo-header; the source is the route's.
		src, err := sourceFor(dst)
		if err != nil {
			return err
		}
		pseudo := append(append(append([]byte{}, src...), dst...), 0, syscall.IPPROTO_TCP, 0, 20)
		binary.BigEndian.PutUint16(msg[16:], checksum(append(pseudo, msg...)))
	case f[1] == "icmp" && len(f) == 4:
		proto = syscall.IPPROTO_ICMP
		msg = make([]byte, 16)
		msg[0] = 8
		binary.BigEndian.PutUint16(msg[4:], uint16(num(2)))
		binary.BigEndian.PutUint16(msg[6:], uint16(num(3)))
		binary.BigEndian.PutUint16(msg[2:], checksum(msg))
	default:
		return fmt.Errorf("bad SKBTRACE_RAW %q", spec)
	}
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_RAW, proto)
	if err != nil {
		return fmt.Errorf("raw socket: %w", err)
	}
	defer syscall.Close(fd)
	var sa syscall.SockaddrInet4
	copy(sa.Addr[:], dst)
	return syscall.Sendto(fd, msg, 0, &sa)
}

// sourceFor is the local address the kernel picks to reach dst.
func sourceFor(dst net.IP) (net.IP, error) {
	c, err := net.Dial("udp4", net.JoinHostPort(dst.String(), "9"))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).IP.To4(), nil
}

// checksum is the Internet checksum of b.
func checksum(b []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(binary.BigEndian.Uint16(b[i:]))
	}
	if len(b)%2 == 1 {
		sum += uint32(b[len(b)-1]) << 8
	}
	for sum > 0xffff {
		sum = sum>>16 + sum&0xffff
	}
	return ^uint16(sum)
}

// sinkCommand is a shell command that accepts one TCP connection on addr
// and reads it to the end, for at most 10 seconds. Run it in a namespace.
func sinkCommand(addr string) string {
	return fmt.Sprintf("env SKBTRACE_SINK=%s %s", addr, os.Args[0])
}

func sink(addr string) error {
	c, err := acceptOne(addr)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	_, err = io.Copy(io.Discard, c)
	return err
}
