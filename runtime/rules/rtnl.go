package rules

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"
)

// rtnetlink's tc constants this package reads (linux/rtnetlink.h,
// pkt_sched.h), named as there.
const (
	tcaKind    = 1
	tcaOptions = 2
	tcaChain   = 11

	iflaIfname = 3

	tcmsgLen   = 20 // struct tcmsg
	ifinfoLen  = 16 // struct ifinfomsg
	tcHClsact  = 0xffff0000
	tcHIngress = 0xfffffff2 // TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS); the ingress qdisc's filters too
	tcHEgress  = 0xfffffff3 // TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_EGRESS)
)

// openRoute is a NETLINK_ROUTE socket, in the network namespace of the
// thread that opens it.
func openRoute() (*nlSocket, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return nil, fmt.Errorf("rtnetlink socket: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("rtnetlink bind: %w", err)
	}
	tv := unix.Timeval{Sec: 5}
	_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	return &nlSocket{fd: fd}, nil
}

// dumpRoute sends one rtnetlink dump request of type typ whose family
// header is hdr, and returns every message of the reply.
func (s *nlSocket) dumpRoute(typ uint16, hdr []byte) ([]nlMsg, error) {
	s.seq++
	seq := s.seq
	b := make([]byte, 16, 16+len(hdr))
	binary.LittleEndian.PutUint16(b[4:], typ)
	binary.LittleEndian.PutUint16(b[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	binary.LittleEndian.PutUint32(b[8:], seq)
	b = append(b, hdr...)
	binary.LittleEndian.PutUint32(b, uint32(len(b)))
	if err := unix.Sendto(s.fd, b, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return nil, fmt.Errorf("rtnetlink send: %w", err)
	}
	return s.dumpReply(seq)
}

// tcmsgOf is a struct tcmsg: a device's index, a handle and parent, and
// tcm_info (a filter's priority and protocol).
func tcmsgOf(ifindex int32, handle, parent, info uint32) []byte {
	b := make([]byte, tcmsgLen)
	binary.LittleEndian.PutUint32(b[4:], uint32(ifindex))
	binary.LittleEndian.PutUint32(b[8:], handle)
	binary.LittleEndian.PutUint32(b[12:], parent)
	binary.LittleEndian.PutUint32(b[16:], info)
	return b
}

// netDev is a device as a tc read names it: its name, and whether it can
// send (up, with a carrier: a mirred redirect to it drops otherwise).
type netDev struct {
	name string
	up   bool
}

// links is the namespace's devices by index.
func (s *nlSocket) links() (map[int32]netDev, error) {
	msgs, err := s.dumpRoute(unix.RTM_GETLINK, make([]byte, ifinfoLen))
	if err != nil {
		return nil, fmt.Errorf("links: %w", err)
	}
	names := map[int32]netDev{}
	for _, m := range msgs {
		if m.typ != unix.RTM_NEWLINK || len(m.body) < ifinfoLen {
			continue
		}
		idx := int32(binary.LittleEndian.Uint32(m.body[4:]))
		flags := binary.LittleEndian.Uint32(m.body[8:])
		names[idx] = netDev{cstr(attrs(m.body[ifinfoLen:])[iflaIfname]), flags&unix.IFF_UP != 0 && flags&unix.IFF_LOWER_UP != 0}
	}
	return names, nil
}

// hookQdiscs is the kind of the qdisc that holds the tc hooks (clsact or
// ingress) of each device that has one, by index.
func (s *nlSocket) hookQdiscs() (map[int32]string, error) {
	msgs, err := s.dumpRoute(unix.RTM_GETQDISC, make([]byte, tcmsgLen))
	if err != nil {
		return nil, fmt.Errorf("qdiscs: %w", err)
	}
	kinds := map[int32]string{}
	for _, m := range msgs {
		if m.typ != unix.RTM_NEWQDISC || len(m.body) < tcmsgLen {
			continue
		}
		kind := cstr(attrs(m.body[tcmsgLen:])[tcaKind])
		if kind == "clsact" || kind == "ingress" {
			kinds[int32(binary.LittleEndian.Uint32(m.body[4:]))] = kind
		}
	}
	return kinds, nil
}
