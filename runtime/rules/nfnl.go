package rules

import (
	"encoding/binary"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// nfnetlink's constants this package speaks (linux/netfilter/nfnetlink.h,
// nf_tables.h), named as there.
const (
	nfnlSubsysNftables = 10
	nfnlMsgBatchBegin  = 0x10
	nfnlMsgBatchEnd    = 0x11
	nfnlgrpNftrace     = 9

	nftMsgNewTable = 0
	nftMsgGetTable = 1
	nftMsgDelTable = 2
	nftMsgNewChain = 3
	nftMsgNewRule  = 6
	nftMsgTrace    = 17

	nftaTableName  = 1
	nftaTableFlags = 2
	nftTableFOwner = 2 // NFT_TABLE_F_OWNER: removed when its socket closes (5.12)

	nftaChainTable  = 1
	nftaChainName   = 3
	nftaChainHook   = 4
	nftaChainPolicy = 5
	nftaChainType   = 7
	nftaHookHooknum = 1
	nftaHookPrio    = 2

	nftaRuleTable = 1
	nftaRuleChain = 2
	nftaRuleExprs = 4
	nftaListElem  = 1
	nftaExprName  = 1
	nftaExprData  = 2

	nftaImmDreg   = 1
	nftaImmData   = 2
	nftaDataValue = 1
	nftaMetaKey   = 2
	nftaMetaSreg  = 3
	nftMetaTrace  = 12 // NFT_META_NFTRACE
	nftReg1       = 1

	nfprotoInet = 1
)

// attr encodes one netlink attribute, padded to 4 bytes.
func attr(typ uint16, data []byte) []byte {
	b := make([]byte, 4, 4+len(data)+3)
	binary.LittleEndian.PutUint16(b, uint16(4+len(data)))
	binary.LittleEndian.PutUint16(b[2:], typ)
	b = append(b, data...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

func attrStr(typ uint16, s string) []byte { return attr(typ, append([]byte(s), 0)) }

func attrBE32(typ uint16, v uint32) []byte {
	return attr(typ, binary.BigEndian.AppendUint32(nil, v))
}

func nested(typ uint16, parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return attr(typ|unix.NLA_F_NESTED, b)
}

// attrs splits a run of attributes by type (nesting flags cleared); the
// last of a type wins.
func attrs(b []byte) map[uint16][]byte {
	m := map[uint16][]byte{}
	for len(b) >= 4 {
		n := int(binary.LittleEndian.Uint16(b))
		if n < 4 || n > len(b) {
			break
		}
		m[binary.LittleEndian.Uint16(b[2:])&^(unix.NLA_F_NESTED|unix.NLA_F_NET_BYTEORDER)] = b[4:n]
		b = b[min((n+3)&^3, len(b)):]
	}
	return m
}

// cstr is a NUL-terminated string attribute's text.
func cstr(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// nfmsg is a netlink message of an nf_tables type with its nfgenmsg
// header (family, version 0, res_id), numbered seq.
func nfmsg(typ uint16, flags uint16, family uint8, resID uint16, seq uint32, body ...[]byte) []byte {
	b := make([]byte, 20)
	binary.LittleEndian.PutUint16(b[4:], typ)
	binary.LittleEndian.PutUint16(b[6:], flags|unix.NLM_F_REQUEST)
	binary.LittleEndian.PutUint32(b[8:], seq)
	b[16] = family
	binary.BigEndian.PutUint16(b[18:], resID)
	for _, p := range body {
		b = append(b, p...)
	}
	binary.LittleEndian.PutUint32(b, uint32(len(b)))
	return b
}

func nftType(msg uint16) uint16 { return nfnlSubsysNftables<<8 | msg }

// nlSocket is a NETLINK_NETFILTER socket, in the network namespace of the
// thread that opened it.
type nlSocket struct {
	fd  int
	seq uint32
}

func openNetfilter() (*nlSocket, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_NETFILTER)
	if err != nil {
		return nil, fmt.Errorf("netlink socket: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("netlink bind: %w", err)
	}
	tv := unix.Timeval{Sec: 5}
	_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	return &nlSocket{fd: fd}, nil
}

func (s *nlSocket) close() error { return unix.Close(s.fd) }

// batch sends msgs (made with seq numbers from next) between a batch's
// begin and end, and waits for each one's ack: the first refusal's errno
// is the error.
func (s *nlSocket) batch(msgs ...func(seq uint32) []byte) error {
	var b []byte
	s.seq++
	b = append(b, nfmsg(nfnlMsgBatchBegin, 0, unix.AF_UNSPEC, nfnlSubsysNftables, s.seq)...)
	first := s.seq + 1
	for _, m := range msgs {
		s.seq++
		b = append(b, m(s.seq)...)
	}
	last := s.seq
	s.seq++
	b = append(b, nfmsg(nfnlMsgBatchEnd, 0, unix.AF_UNSPEC, nfnlSubsysNftables, s.seq)...)
	if err := unix.Sendto(s.fd, b, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return fmt.Errorf("netlink send: %w", err)
	}
	var firstErr error
	for acked := first; acked <= last; {
		msgs, err := s.recv()
		if err != nil {
			return err
		}
		for _, m := range msgs {
			if m.typ != unix.NLMSG_ERROR || len(m.body) < 4 || m.seq < first || m.seq > last {
				continue
			}
			if e := int32(binary.LittleEndian.Uint32(m.body)); e != 0 && firstErr == nil {
				firstErr = unix.Errno(-e)
			}
			acked = m.seq + 1
		}
	}
	return firstErr
}

// dump sends one dump request and returns every message of the reply.
func (s *nlSocket) dump(typ uint16, family uint8, body ...[]byte) ([]nlMsg, error) {
	s.seq++
	seq := s.seq
	if err := unix.Sendto(s.fd, nfmsg(typ, unix.NLM_F_DUMP, family, 0, seq, body...), 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return nil, fmt.Errorf("netlink send: %w", err)
	}
	return s.dumpReply(seq)
}

// dumpReply reads the reply to the dump request seq: every message up to
// NLMSG_DONE, or the error an NLMSG_ERROR carries.
func (s *nlSocket) dumpReply(seq uint32) ([]nlMsg, error) {
	var out []nlMsg
	for {
		msgs, err := s.recv()
		if err != nil {
			return nil, err
		}
		for _, m := range msgs {
			if m.seq != seq {
				continue
			}
			switch m.typ {
			case unix.NLMSG_DONE:
				return out, nil
			case unix.NLMSG_ERROR:
				if len(m.body) >= 4 {
					if e := int32(binary.LittleEndian.Uint32(m.body)); e != 0 {
						return nil, unix.Errno(-e)
					}
				}
				return out, nil
			}
			out = append(out, m)
		}
	}
}

// nlMsg is one received message: its type, sequence number and body
// (after the netlink header).
type nlMsg struct {
	typ  uint16
	seq  uint32
	body []byte
}

var errTruncated = errors.New("netlink: message truncated")

func (s *nlSocket) recv() ([]nlMsg, error) { return recvFrom(s.fd, 0) }

// recvFrom reads one datagram of messages; flags may be MSG_DONTWAIT.
func recvFrom(fd int, flags int) ([]nlMsg, error) {
	buf := make([]byte, 1<<16)
	n, _, err := unix.Recvfrom(fd, buf, flags)
	if err != nil {
		return nil, err
	}
	return splitMsgs(buf[:n])
}

func splitMsgs(b []byte) ([]nlMsg, error) {
	var out []nlMsg
	for len(b) >= 16 {
		n := int(binary.LittleEndian.Uint32(b))
		if n < 16 || n > len(b) {
			return out, errTruncated
		}
		out = append(out, nlMsg{typ: binary.LittleEndian.Uint16(b[4:]), seq: binary.LittleEndian.Uint32(b[8:]), body: b[16:n]})
		b = b[min((n+3)&^3, len(b)):]
	}
	return out, nil
}
