package rules

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// TablePrefix starts the name of the table --nftrace adds to a network
// namespace's ruleset; the process's id follows (skbtrace_nftrace_4242).
const TablePrefix = "skbtrace_nftrace_"

// The trace attributes (enum nft_trace_attributes) and types.
const (
	nftaTraceTable   = 1
	nftaTraceChain   = 2
	nftaTraceHandle  = 3
	nftaTraceType    = 4
	nftaTraceVerdict = 5
	nftaTraceID      = 6
	nftaTraceNH      = 8
	nftaTraceTH      = 9
	nftaTraceIIF     = 10
	nftaTraceOIF     = 12
	nftaTraceMark    = 14
	nftaTracePolicy  = 16
	nftaVerdictCode  = 1

	nftTracePolicy = 1
	nftTraceRule   = 3
	nfDrop         = 0

	// keptDrops bounds the drop verdicts kept per namespace, waiting for
	// the kfree_skb event that each one explains.
	keptDrops = 4096
)

// Nftrace is --nftrace: the kernel's nftables trace (NFNLGRP_NFTRACE
// events), turned on for the packets of each network namespace that has an
// nftables ruleset (iptables-nft's too) by a table of skbtrace's own,
// inet skbtrace_nftrace_PID, whose two chains (prerouting and output, at
// the first priority, -2147483648) set nftrace on every packet and do
// nothing else. The kernel then reports each rule verdict of those
// packets; the drops are kept until a kfree_skb event asks for them.
//
// The table is an owner table (NFT_TABLE_F_OWNER, Linux 5.12): the kernel
// deletes it when the socket that made it closes, however skbtrace ends,
// SIGKILL too. Older kernels refuse the flag: the table is then a plain
// one, deleted by Close, and a table left by a killed skbtrace (its PID no
// longer running) is deleted by the next start in that namespace.
type Nftrace struct {
	mu       sync.Mutex
	name     string
	nets     map[uint64]*traceNet
	skipped  map[uint64]bool // namespaces without an nftables ruleset, when last scanned
	lastScan time.Time
	warn     func(string)
	plain    bool            // the kernel refused NFT_TABLE_F_OWNER
	only     map[uint64]bool // the namespaces it may change; nil: all
	done     chan struct{}   // closed by Close: read ends
}

type traceNet struct {
	inode uint64
	path  string
	ctl   *nlSocket // made the table; owns it where the kernel allows
	trace int       // subscribed to NFNLGRP_NFTRACE
	owner bool
	drops []traceDrop
	lost  int // trace messages the socket had no room for (ENOBUFS)
	// The kernel puts a packet's headers in the first trace message of a
	// chain's walk only: kept by trace id for the verdicts that follow.
	heads    map[uint32]traceHeads
	headList []uint32
}

// traceHeads are the headers a trace message carried.
type traceHeads struct {
	nh, th         []byte
	iif, oif, mark uint32
}

// traceDrop is one drop verdict the kernel traced.
type traceDrop struct {
	family       uint8
	table, chain string
	handle       uint64
	policy       bool
	id           uint32
	traceHeads
}

// StartNftrace adds the trace table to every network namespace that has
// an nftables ruleset, and listens to its traces. warn says, once each,
// what it could not do.
func StartNftrace(warn func(string)) (*Nftrace, error) { return startNftrace(warn, nil) }

// startNftrace is StartNftrace in the namespaces only names (nil: all).
func startNftrace(warn func(string), only map[uint64]bool) (*Nftrace, error) {
	t := &Nftrace{name: TablePrefix + strconv.Itoa(os.Getpid()), nets: map[uint64]*traceNet{}, skipped: map[uint64]bool{}, warn: warn, only: only}
	if err := t.scan(); err != nil {
		t.Close()
		return nil, err
	}
	t.done = make(chan struct{})
	go t.read(t.done)
	return t, nil
}

// read drains the trace sockets while skbtrace runs, not only when a drop
// asks: every traced packet's verdicts come, accepted ones too, and a
// socket left unread would fill and lose the drops' (ENOBUFS). Reads are
// made under the lock, as take's, so no message is ever between a read and
// the list take looks in.
func (t *Nftrace) read(done <-chan struct{}) {
	for {
		t.mu.Lock()
		var fds []unix.PollFd
		for _, n := range t.nets {
			if n.trace >= 0 {
				fds = append(fds, unix.PollFd{Fd: int32(n.trace), Events: unix.POLLIN})
			}
		}
		t.mu.Unlock()
		select {
		case <-done:
			return
		default:
		}
		if len(fds) == 0 {
			select {
			case <-done:
				return
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		if _, err := unix.Poll(fds, 100); err != nil && !errors.Is(err, unix.EINTR) {
			return
		}
		t.mu.Lock()
		for _, n := range t.nets {
			n.drain()
		}
		t.mu.Unlock()
	}
}

// scan adds the table to the namespaces with a ruleset not yet traced.
func (t *Nftrace) scan() error {
	t.lastScan = time.Now()
	var firstErr error
	for ino, path := range netnsPaths() {
		if t.nets[ino] != nil || t.only != nil && !t.only[ino] {
			continue
		}
		n := &traceNet{inode: ino, path: path, trace: -1}
		err := inNetns(path, func() error { return t.setup(n) })
		switch {
		case errors.Is(err, errNoRuleset):
			t.skipped[ino] = true
			n.close(t.name)
		case err != nil:
			n.close(t.name)
			if firstErr == nil {
				firstErr = fmt.Errorf("nftrace in netns %d (%s): %w", ino, path, translate(err))
			}
		default:
			delete(t.skipped, ino)
			t.nets[ino] = n
		}
	}
	return firstErr
}

var errNoRuleset = errors.New("no nftables ruleset")

// translate says what a kernel error means here.
func translate(err error) error {
	switch {
	case errors.Is(err, unix.EPERM):
		return fmt.Errorf("%w: changing the ruleset needs CAP_NET_ADMIN", err)
	case errors.Is(err, unix.EPROTONOSUPPORT), errors.Is(err, unix.ENOENT) && strings.Contains(err.Error(), "nf_tables"):
		return fmt.Errorf("%w: the kernel has no nf_tables (modprobe nf_tables)", err)
	}
	return err
}

// setup runs in n's namespace: stale tables out, the trace socket, then
// the table.
func (t *Nftrace) setup(n *traceNet) error {
	ctl, err := openNetfilter()
	if err != nil {
		return err
	}
	n.ctl = ctl
	msgs, err := ctl.dump(nftType(nftMsgGetTable), unix.AF_UNSPEC)
	if err != nil {
		return fmt.Errorf("list tables: %w", err)
	}
	others := 0
	for _, m := range msgs {
		if len(m.body) < 4 {
			continue
		}
		a := attrs(m.body[4:])
		name := cstr(a[nftaTableName])
		if !strings.HasPrefix(name, TablePrefix) {
			others++
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimPrefix(name, TablePrefix)); err == nil && !running(pid) {
			// A table left by an skbtrace killed on a kernel without
			// owner tables.
			fam := m.body[0]
			_ = ctl.batch(func(seq uint32) []byte {
				return nfmsg(nftType(nftMsgDelTable), unix.NLM_F_ACK, fam, 0, seq, attrStr(nftaTableName, name))
			})
		}
	}
	if others == 0 {
		return errNoRuleset
	}
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_NETFILTER)
	if err != nil {
		return fmt.Errorf("netlink socket: %w", err)
	}
	n.trace = fd
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return fmt.Errorf("netlink bind: %w", err)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_NETLINK, unix.NETLINK_ADD_MEMBERSHIP, nfnlgrpNftrace); err != nil {
		return fmt.Errorf("join NFNLGRP_NFTRACE: %w", err)
	}
	if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 8<<20) != nil {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, 8<<20)
	}
	n.owner = !t.plain
	err = ctl.batch(t.tableMsgs(n.owner)...)
	if n.owner && (errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EINVAL)) {
		// Before 5.12: no owner tables (5.10 says EINVAL of the flag).
		t.plain, n.owner = true, false
		t.warn(fmt.Sprintf("this kernel has no owner tables (NFT_TABLE_F_OWNER, 5.12): table inet %s is deleted at exit; after a SIGKILL, by the next skbtrace --nftrace", t.name))
		err = ctl.batch(t.tableMsgs(false)...)
	}
	if err != nil {
		return fmt.Errorf("add table inet %s: %w", t.name, err)
	}
	return nil
}

// running reports whether a process pid exists.
func running(pid int) bool {
	return pid > 0 && unix.Kill(pid, 0) != unix.ESRCH
}

// tableMsgs are the messages that add the table: its two chains, each with
// the one rule `meta nftrace set 1`.
func (t *Nftrace) tableMsgs(owner bool) []func(uint32) []byte {
	tbl := []byte(attrStr(nftaTableName, t.name))
	if owner {
		tbl = append(tbl, attrBE32(nftaTableFlags, nftTableFOwner)...)
	}
	msgs := []func(uint32) []byte{func(seq uint32) []byte {
		return nfmsg(nftType(nftMsgNewTable), unix.NLM_F_CREATE|unix.NLM_F_EXCL|unix.NLM_F_ACK, nfprotoInet, 0, seq, tbl)
	}}
	for _, c := range []struct {
		name string
		hook uint32
	}{{"prerouting", 0}, {"output", 3}} {
		msgs = append(msgs, func(seq uint32) []byte {
			return nfmsg(nftType(nftMsgNewChain), unix.NLM_F_CREATE|unix.NLM_F_ACK, nfprotoInet, 0, seq,
				attrStr(nftaChainTable, t.name), attrStr(nftaChainName, c.name),
				nested(nftaChainHook, attrBE32(nftaHookHooknum, c.hook), attrBE32(nftaHookPrio, 0x80000000)),
				attrBE32(nftaChainPolicy, 1), attrStr(nftaChainType, "filter"))
		}, func(seq uint32) []byte {
			imm := nested(nftaListElem, attrStr(nftaExprName, "immediate"),
				nested(nftaExprData, attrBE32(nftaImmDreg, nftReg1), nested(nftaImmData, attr(nftaDataValue, []byte{1}))))
			meta := nested(nftaListElem, attrStr(nftaExprName, "meta"),
				nested(nftaExprData, attrBE32(nftaMetaKey, nftMetaTrace), attrBE32(nftaMetaSreg, nftReg1)))
			return nfmsg(nftType(nftMsgNewRule), unix.NLM_F_CREATE|unix.NLM_F_APPEND|unix.NLM_F_ACK, nfprotoInet, 0, seq,
				attrStr(nftaRuleTable, t.name), attrStr(nftaRuleChain, c.name), nested(nftaRuleExprs, imm, meta))
		})
	}
	return msgs
}

// Namespaces is how many network namespaces are traced, and whether the
// kernel made the tables owner tables.
func (t *Nftrace) Namespaces() (n int, owner bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.nets), !t.plain
}

// Close removes the tables (a plain table by a message, an owner table
// with its socket) and stops listening.
func (t *Nftrace) Close() error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done != nil {
		close(t.done)
		t.done = nil
	}
	for ino, n := range t.nets {
		n.close(t.name)
		delete(t.nets, ino)
	}
	return nil
}

// close deletes a plain table, then closes the sockets.
func (n *traceNet) close(table string) {
	if n.ctl != nil {
		if !n.owner {
			_ = n.ctl.batch(func(seq uint32) []byte {
				return nfmsg(nftType(nftMsgDelTable), unix.NLM_F_ACK, nfprotoInet, 0, seq, attrStr(nftaTableName, table))
			})
		}
		n.ctl.close()
		n.ctl = nil
	}
	if n.trace >= 0 {
		unix.Close(n.trace)
		n.trace = -1
	}
}

// drain reads every trace message waiting on n's socket, keeping the
// drop verdicts.
func (n *traceNet) drain() {
	for {
		msgs, err := recvFrom(n.trace, unix.MSG_DONTWAIT)
		if errors.Is(err, unix.ENOBUFS) {
			n.lost++
			continue
		}
		if err != nil && !errors.Is(err, errTruncated) {
			return
		}
		for _, m := range msgs {
			if m.typ != nftType(nftMsgTrace) || len(m.body) < 4 {
				continue
			}
			d, ok := parseTrace(m.body)
			if len(d.nh) > 0 {
				n.keepHeads(d.id, d.traceHeads)
			} else if h, seen := n.heads[d.id]; seen {
				d.traceHeads = h
			}
			if ok {
				if len(n.drops) == keptDrops {
					n.drops = append(n.drops[:0], n.drops[1:]...)
				}
				n.drops = append(n.drops, d)
			}
		}
	}
}

// keepHeads keeps a packet's headers by trace id, the last keptDrops.
func (n *traceNet) keepHeads(id uint32, h traceHeads) {
	if n.heads == nil {
		n.heads = map[uint32]traceHeads{}
	}
	if _, ok := n.heads[id]; !ok {
		if len(n.headList) == keptDrops {
			delete(n.heads, n.headList[0])
			n.headList = n.headList[1:]
		}
		n.headList = append(n.headList, id)
	}
	n.heads[id] = h
}

// parseTrace decodes a trace message's body (nfgenmsg, attributes), and
// reports whether it is a drop verdict, by a rule or a base chain's policy.
func parseTrace(body []byte) (traceDrop, bool) {
	a := attrs(body[4:])
	d := traceDrop{family: body[0], table: cstr(a[nftaTraceTable]), chain: cstr(a[nftaTraceChain])}
	be32 := func(b []byte) (uint32, bool) {
		if len(b) < 4 {
			return 0, false
		}
		return binary.BigEndian.Uint32(b), true
	}
	d.id, _ = be32(a[nftaTraceID])
	d.nh = append([]byte(nil), a[nftaTraceNH]...)
	d.th = append([]byte(nil), a[nftaTraceTH]...)
	d.iif, _ = be32(a[nftaTraceIIF])
	d.oif, _ = be32(a[nftaTraceOIF])
	d.mark, _ = be32(a[nftaTraceMark])
	typ, _ := be32(a[nftaTraceType])
	switch typ {
	case nftTraceRule:
		v, ok := be32(attrs(a[nftaTraceVerdict])[nftaVerdictCode])
		if !ok || v != nfDrop {
			return d, false
		}
		if h := a[nftaTraceHandle]; len(h) == 8 {
			d.handle = binary.BigEndian.Uint64(h)
		}
	case nftTracePolicy:
		v, ok := be32(a[nftaTracePolicy])
		if !ok || v != nfDrop {
			return d, false
		}
		d.policy = true
	default:
		return d, false
	}
	return d, true
}

// matches reports whether the trace's headers are the packet's: its
// addresses, its transport protocol (where no IPv6 extension header hides
// it) and, for TCP, UDP and SCTP, its ports.
func (d *traceDrop) matches(p Drop) bool {
	nh, th := d.nh, d.th
	var src, dst netip.Addr
	var proto uint8
	switch {
	case len(nh) >= 20 && nh[0]>>4 == 4:
		src, dst, proto = netip.AddrFrom4([4]byte(nh[12:16])), netip.AddrFrom4([4]byte(nh[16:20])), nh[9]
	case len(nh) >= 40 && nh[0]>>4 == 6:
		src, dst, proto = netip.AddrFrom16([16]byte(nh[8:24])), netip.AddrFrom16([16]byte(nh[24:40])), nh[6]
	default:
		return false
	}
	if src != p.Saddr.Unmap() && src != p.Saddr || dst != p.Daddr.Unmap() && dst != p.Daddr {
		return false
	}
	switch proto {
	case 0, 43, 44, 50, 51, 60, 135, 139, 140:
		// IPv6 extension headers: the transport protocol is behind.
		return true
	}
	if proto != p.L4 {
		return false
	}
	switch proto {
	case 6, 17, 132, 136:
		if len(th) < 4 {
			return true
		}
		return binary.BigEndian.Uint16(th) == p.Sport && binary.BigEndian.Uint16(th[2:]) == p.Dport
	}
	return true
}

// take returns and forgets the oldest drop verdict traced for this packet
// in its namespace, reading the traces sent so far first: the kernel
// sends a verdict's trace before it frees the packet, so the one that
// explains a drop being printed is waiting on the socket.
func (t *Nftrace) take(p Drop) (traceDrop, *traceNet, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, n := range t.nets {
		n.drain()
	}
	for _, n := range t.nets {
		if n.inode != p.Netns {
			continue
		}
		for i := range n.drops {
			if n.drops[i].matches(p) {
				d := n.drops[i]
				n.drops = append(n.drops[:i], n.drops[i+1:]...)
				return d, n, true
			}
		}
	}
	return traceDrop{}, nil, false
}

// traced reports whether netns is traced; one not traced nor known
// without a ruleset starts a new scan, once a second at most (a namespace
// made since), which the next drop there benefits from.
func (t *Nftrace) traced(netns uint64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.nets[netns] != nil {
		return true
	}
	if time.Since(t.lastScan) > time.Second {
		if err := t.scan(); err != nil {
			t.warn(err.Error())
		}
	}
	return false
}

// lostTraces is how many trace messages the sockets had no room for.
func (t *Nftrace) lostTraces() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, tn := range t.nets {
		n += tn.lost
	}
	return n
}
