package main

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/skbtrace/skbtrace/internal/pcaptest"
)

// injectCommand is a shell command, for -c, that sends pcaptest's frames
// out of dev in the namespace ns with an AF_PACKET socket, frame i with
// the firewall mark base|i.
func injectCommand(ns, dev string, base uint32) string {
	return fmt.Sprintf("ip netns exec %s env SKBTRACE_INJECT=%s,%d %s", ns, dev, base, os.Args[0])
}

// inject implements injectCommand.
func inject(spec string) error {
	dev, b, _ := strings.Cut(spec, ",")
	base, err := strconv.ParseUint(b, 10, 32)
	if err != nil {
		return fmt.Errorf("bad SKBTRACE_INJECT %q", spec)
	}
	ifi, err := net.InterfaceByName(dev)
	if err != nil {
		return err
	}
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, 0)
	if err != nil {
		return fmt.Errorf("AF_PACKET socket: %w", err)
	}
	defer unix.Close(fd)
	to := &unix.SockaddrLinklayer{Ifindex: ifi.Index}
	for i, f := range pcaptest.Frames() {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_MARK, int(base)|i); err != nil {
			return fmt.Errorf("SO_MARK: %w", err)
		}
		if err := unix.Sendto(fd, f, 0, to); err != nil {
			return fmt.Errorf("send frame %d: %w", i, err)
		}
	}
	return nil
}
