package nl

import (
	"encoding/binary"
	"errors"
	"net"
	"syscall"
	"testing"
)

// TestExchange asks the kernel for loopback's link with an ack, and for a
// device that does not exist: the first is acknowledged, the second's
// error is its errno.
func TestExchange(t *testing.T) {
	getLink := func(index uint32) []byte {
		ifi := make([]byte, 16)
		binary.LittleEndian.PutUint32(ifi[4:], index)
		return Msg(syscall.RTM_GETLINK, FAck, ifi)
	}
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Fatal(err)
	}
	if err := Exchange(syscall.NETLINK_ROUTE, [][]byte{getLink(uint32(lo.Index))}, 1); err != nil {
		t.Errorf("lo: %v", err)
	}
	if err := Exchange(syscall.NETLINK_ROUTE, [][]byte{getLink(0x7ffffff0)}, 1); !errors.Is(err, syscall.ENODEV) {
		t.Errorf("a device that does not exist: %v, want ENODEV", err)
	}
}
