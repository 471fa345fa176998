package names

import (
	"encoding/binary"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// peerLink is a device in the resolver's network namespace whose other end
// (a veth's peer) is in another: IFLA_LINK_NETNSID names that namespace by
// its ID as seen from here.
type peerLink struct {
	name  string
	nsid  int32
	index int32
}

// peerLinks dumps the links of the calling thread's network namespace
// (RTM_GETLINK) and returns those with a link-netnsid.
func peerLinks() ([]peerLink, error) {
	b, err := syscall.NetlinkRIB(syscall.RTM_GETLINK, syscall.AF_UNSPEC)
	if err != nil {
		return nil, fmt.Errorf("listing links: %w", err)
	}
	msgs, err := syscall.ParseNetlinkMessage(b)
	if err != nil {
		return nil, fmt.Errorf("listing links: %w", err)
	}
	var out []peerLink
	for _, m := range msgs {
		if m.Header.Type != syscall.RTM_NEWLINK || len(m.Data) < syscall.SizeofIfInfomsg {
			continue
		}
		attrs, err := syscall.ParseNetlinkRouteAttr(&m)
		if err != nil {
			continue
		}
		l := peerLink{index: int32(binary.NativeEndian.Uint32(m.Data[4:8]))}
		hasNsid := false
		for _, a := range attrs {
			switch a.Attr.Type {
			case syscall.IFLA_IFNAME:
				l.name = string(trimNul(a.Value))
			case unix.IFLA_LINK_NETNSID:
				if len(a.Value) >= 4 {
					l.nsid, hasNsid = int32(binary.NativeEndian.Uint32(a.Value)), true
				}
			}
		}
		if hasNsid && l.name != "" {
			out = append(out, l)
		}
	}
	return out, nil
}

// trimNul drops a netlink string's terminating NULs.
func trimNul(b []byte) []byte {
	for len(b) > 0 && b[len(b)-1] == 0 {
		b = b[:len(b)-1]
	}
	return b
}

// nsidOf asks the kernel (RTM_GETNSID with NETNSA_FD) for the ID the
// resolver's network namespace gives the namespace at path, as the
// link-netnsid of a link into it reads. ok is false where none is assigned
// or where path no longer opens the namespace of inode ino (a PID reused).
func nsidOf(fd int, seq uint32, path string, ino uint64) (nsid int32, ok bool, err error) {
	ns, err := os.Open(path)
	if err != nil {
		return 0, false, err
	}
	defer ns.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(ns.Fd()), &st); err != nil || st.Ino != ino {
		return 0, false, err
	}
	// nlmsghdr, rtgenmsg padded to 4, NETNSA_FD attribute.
	req := make([]byte, unix.NLMSG_HDRLEN+4+8)
	binary.NativeEndian.PutUint32(req[0:], uint32(len(req)))
	binary.NativeEndian.PutUint16(req[4:], unix.RTM_GETNSID)
	binary.NativeEndian.PutUint16(req[6:], unix.NLM_F_REQUEST)
	binary.NativeEndian.PutUint32(req[8:], seq)
	req[16] = unix.AF_UNSPEC
	binary.NativeEndian.PutUint16(req[20:], 8)
	binary.NativeEndian.PutUint16(req[22:], unix.NETNSA_FD)
	binary.NativeEndian.PutUint32(req[24:], uint32(ns.Fd()))
	if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return 0, false, err
	}
	buf := make([]byte, 4096)
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			return 0, false, err
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return 0, false, err
		}
		for _, m := range msgs {
			if m.Header.Seq != seq {
				continue
			}
			switch m.Header.Type {
			case unix.NLMSG_ERROR:
				if len(m.Data) >= 4 {
					if e := int32(binary.NativeEndian.Uint32(m.Data)); e != 0 {
						return 0, false, syscall.Errno(-e)
					}
				}
				return 0, false, nil
			case unix.RTM_NEWNSID:
				data := m.Data[min(4, len(m.Data)):] // past rtgenmsg
				for len(data) >= 4 {
					l := int(binary.NativeEndian.Uint16(data))
					t := binary.NativeEndian.Uint16(data[2:])
					if l < 4 || l > len(data) {
						break
					}
					if t == unix.NETNSA_NSID && l >= 8 {
						id := int32(binary.NativeEndian.Uint32(data[4:]))
						return id, id >= 0, nil
					}
					data = data[(l+3)&^3:]
				}
				return 0, false, nil
			}
		}
	}
}

// nsidsOf maps the network namespaces at paths (inode → a path that opens
// it) to the IDs the resolver's namespace gives them, asking only until every
// ID in want is found.
func nsidsOf(paths map[uint64]string, want map[int32]bool) (map[int32]uint64, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return nil, fmt.Errorf("opening a netlink socket: %w", err)
	}
	defer unix.Close(fd)
	tv := unix.Timeval{Sec: 1}
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return nil, fmt.Errorf("binding a netlink socket: %w", err)
	}
	out := map[int32]uint64{}
	seq := uint32(1)
	for ino, p := range paths {
		if len(out) == len(want) {
			break
		}
		seq++
		id, ok, err := nsidOf(fd, seq, p, ino)
		if err != nil || !ok || !want[id] {
			continue
		}
		out[id] = ino
	}
	return out, nil
}
