// Package nl is the VM suite's netlink, as much as vmtool (links,
// nftables chains) and bpfload (qdiscs, filters, XDP) need: attributes,
// messages, and one exchange that sends them and waits for their acks. It
// imports the standard library only, as vmtool does.
package nl

import (
	"encoding/binary"
	"fmt"
	"syscall"
)

// Message flags and types (linux/netlink.h).
const (
	FRequest = 0x1
	FAck     = 0x4
	FExcl    = 0x200
	FCreate  = 0x400
	FNested  = 0x8000 // an attribute's type: it holds attributes
	msgError = 2
)

// Attr encodes one netlink attribute, padded to 4 bytes.
func Attr(typ uint16, data []byte) []byte {
	b := make([]byte, 4, 4+len(data)+3)
	binary.LittleEndian.PutUint16(b, uint16(4+len(data)))
	binary.LittleEndian.PutUint16(b[2:], typ)
	b = append(b, data...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// AttrStr is a NUL-terminated string attribute.
func AttrStr(typ uint16, s string) []byte { return Attr(typ, append([]byte(s), 0)) }

// Msg is a netlink message of type typ, with flags (FRequest added) and
// a body of the parts given (a family's header, then attributes);
// Exchange numbers it.
func Msg(typ, flags uint16, parts ...[]byte) []byte {
	b := make([]byte, 16)
	binary.LittleEndian.PutUint16(b[4:], typ)
	binary.LittleEndian.PutUint16(b[6:], flags|FRequest)
	for _, p := range parts {
		b = append(b, p...)
	}
	binary.LittleEndian.PutUint32(b, uint32(len(b)))
	return b
}

// Exchange sends msgs in one write on a new netlink socket of protocol
// proto, numbered from 1, and waits (5 s at most) for acks
// acknowledgements: the messages sent with FAck. A refused message's
// error is its errno.
func Exchange(proto int, msgs [][]byte, acks int) error {
	fd, err := syscall.Socket(syscall.AF_NETLINK, syscall.SOCK_RAW|syscall.SOCK_CLOEXEC, proto)
	if err != nil {
		return fmt.Errorf("netlink socket: %w", err)
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrNetlink{Family: syscall.AF_NETLINK}); err != nil {
		return fmt.Errorf("bind: %w", err)
	}
	tv := syscall.Timeval{Sec: 5}
	if err := syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv); err != nil {
		return err
	}
	var batch []byte
	for i, m := range msgs {
		binary.LittleEndian.PutUint32(m[8:], uint32(i+1))
		batch = append(batch, m...)
	}
	if err := syscall.Sendto(fd, batch, 0, &syscall.SockaddrNetlink{Family: syscall.AF_NETLINK}); err != nil {
		return fmt.Errorf("send: %w", err)
	}
	buf := make([]byte, 1<<16)
	for acked := 0; acked < acks; {
		n, _, err := syscall.Recvfrom(fd, buf, 0)
		if err != nil {
			return fmt.Errorf("waiting for the kernel's answer: %w", err)
		}
		for b := buf[:n]; len(b) >= 16; {
			l := int(binary.LittleEndian.Uint32(b))
			if l < 16 || l > len(b) {
				return fmt.Errorf("bad netlink answer")
			}
			if binary.LittleEndian.Uint16(b[4:]) == msgError && l >= 20 {
				if e := int32(binary.LittleEndian.Uint32(b[16:])); e != 0 {
					return syscall.Errno(-e)
				}
				acked++
			}
			b = b[(l+3)&^3:]
		}
	}
	return nil
}
