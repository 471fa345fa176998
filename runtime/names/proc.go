package names

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// procInfo is what /proc says of one process.
type procInfo struct {
	pid      uint32
	netns    uint64 // the inode of /proc/PID/ns/net, 0 where it could not be read
	cgroup2  string // the path of its "0::" line, "" on a v1-only host
	cgroupID uint64 // the ID (inode) of cgroup2's directory, 0 where unknown or not a container's
	cont     cgroupContainer
	hasCont  bool // cont was read from one of its cgroup paths
}

// procScan is one pass over /proc.
type procScan struct {
	procs  []procInfo // by PID
	self   uint64     // the resolver's own network namespace
	denied int        // processes whose ns/net could not be read: permission denied
}

// procRecheck is the most refreshes a process is kept without reading it
// again.
//
// Reading a process (stat of ns/net, read of cgroup, stat of its cgroup's
// directory) costs some 30 to 50 us of CPU, listing it in /proc about 1 us;
// so a refresh reads only processes it has not seen and keeps what it read
// of the others. A new process under a reused PID is a new entry in the
// listing: procfs gives /proc/PID the next inode of a counter when the
// process's directory is first looked up, so the listing's d_ino changes
// with the process (and, rarely, when the kernel dropped a live process's
// dentry: a read more, not a wrong name). Reading /proc/PID/stat's start
// time instead would cost as much as reading the process.
//
// What a listing cannot see is a process that changes its own network
// namespace (setns, unshare: `ip netns exec`, nsenter, a runtime's init
// before exec) or is moved to another cgroup (a runtime placing its
// container's init). Both happen mostly in a process's first moments, so a
// process first seen after the resolver's first refresh is read again at
// the next refresh, then after 2, 4, 8 and 16 more, and every procRecheck
// refreshes from then on (the gap back to 1 whenever a read finds it
// changed). The processes found by the first refresh are taken as settled
// and read again once within its next procRecheck refreshes, spread by PID.
// A long-lived process that moves is thus named from where it was for at
// most procRecheck refreshes (16 s at the default 1 s poll, less where
// misses nudge the refresher); re-statting ns/net alone every refresh
// would still cost a sixth of a full read (measured) and miss cgroup moves.
// The steady cost is the listing plus 1/procRecheck of the reads.
const procRecheck = 16

// procEntry is what procCache keeps of one process.
type procEntry struct {
	procInfo
	dino   uint64 // /proc/PID's inode in the listing when it was read
	denied bool   // its ns/net was unreadable: permission denied
	next   uint64 // the refresh that reads it again
	gap    uint64 // refreshes from its last read to next
	mark   uint64 // the last refresh that listed it
}

// procCache reads /proc incrementally (see procRecheck). It is used by one
// refresh at a time.
type procCache struct {
	root  string
	n     uint64 // refreshes so far
	procs map[uint32]*procEntry
	buf   []byte // the listing's getdents buffer
	file  []byte // readFile's buffer

	// The cgroup v2 mount, read from self/mountinfo at the first refresh
	// and again in each refresh that needs a cgroup directory's ID.
	mnt, mntRoot string
	mntErr       error
	mntAt        uint64            // the refresh that read it, 0 never
	cgIDs        map[string]uint64 // cgroup path → ID, statted this refresh
}

// scan lists the processes under the procfs root and reads those new,
// reused or due (see procRecheck). A process that exits meanwhile is left
// out; one whose namespace cannot be read (permission) is counted in
// denied, its cgroups still read. changed is whether any process came,
// went or read differently.
func (c *procCache) scan() (s procScan, changed bool, err error) {
	var st unix.Stat_t
	if err := unix.Stat(filepath.Join(c.root, "self/ns/net"), &st); err != nil {
		return s, false, fmt.Errorf("reading this process's network namespace: %w", err)
	}
	s.self = st.Ino
	list, err := c.list()
	if err != nil {
		return s, false, err
	}
	c.n++
	first := c.procs == nil
	if first {
		c.procs = make(map[uint32]*procEntry, len(list))
		c.mountinfo()
	}
	clear(c.cgIDs)
	s.procs = make([]procInfo, 0, len(list))
	for _, l := range list {
		e := c.procs[l.pid]
		switch {
		case e == nil || e.dino != l.ino || l.ino <= 1:
			// New, or a new process under a reused PID (d_ino 0 or 1: procfs
			// could not say; read it each time).
			ne, ok := c.read(l.pid)
			if !ok {
				if e != nil {
					delete(c.procs, l.pid)
					changed = true
				}
				continue
			}
			ne.dino = l.ino
			if first {
				ne.gap = procRecheck
				ne.next = c.n + 1 + uint64(l.pid)%procRecheck
			} else {
				ne.gap, ne.next = 1, c.n+1
			}
			if e == nil || !e.same(ne) {
				changed = true
			}
			e = ne
			c.procs[l.pid] = e
		case c.n >= e.next:
			ne, ok := c.read(l.pid)
			if !ok {
				delete(c.procs, l.pid)
				changed = true
				continue
			}
			ne.dino = l.ino
			if e.same(ne) {
				ne.gap = min(2*e.gap, procRecheck)
			} else {
				ne.gap = 1
				changed = true
			}
			ne.next = c.n + ne.gap
			e = ne
			c.procs[l.pid] = e
		}
		e.mark = c.n
		if e.denied {
			s.denied++
		}
		s.procs = append(s.procs, e.procInfo)
	}
	for pid, e := range c.procs {
		if e.mark != c.n {
			delete(c.procs, pid)
			changed = true
		}
	}
	return s, changed, nil
}

// same reports whether two reads of a process found the same.
func (e *procEntry) same(o *procEntry) bool {
	return e.procInfo == o.procInfo && e.denied == o.denied
}

// read reads one process: its network namespace, its cgroups and its
// cgroup v2 directory's ID. ok is false where it is gone.
func (c *procCache) read(pid uint32) (e *procEntry, ok bool) {
	e = &procEntry{procInfo: procInfo{pid: pid}}
	dir := c.root + "/" + strconv.FormatUint(uint64(pid), 10)
	var st unix.Stat_t
	if err := unix.Stat(dir+"/ns/net", &st); err == nil {
		e.netns = st.Ino
	} else if errors.Is(err, fs.ErrPermission) {
		e.denied = true
	} else {
		return nil, false // gone
	}
	b, err := c.readFile(dir + "/cgroup")
	if err != nil && e.netns == 0 {
		return nil, false
	}
	e.cgroup2, e.cont, e.hasCont = parseProcCgroup(b)
	if e.hasCont && e.cgroup2 != "" {
		e.cgroupID = c.cgroupID(e.cgroup2)
	}
	return e, true
}

// readFile reads a small file into the cache's buffer, valid until the next
// read: open, read and close, without os.File's poller and fstat (a third
// of os.ReadFile's cost on /proc/PID/cgroup).
func (c *procCache) readFile(p string) ([]byte, error) {
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	if c.file == nil {
		c.file = make([]byte, 4096)
	}
	n := 0
	for {
		if n == len(c.file) {
			c.file = append(c.file, make([]byte, len(c.file))...)
		}
		m, err := unix.Read(fd, c.file[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		n += m
		if m == 0 {
			return c.file[:n], nil
		}
	}
}

// mountinfo reads the cgroup v2 mount.
func (c *procCache) mountinfo() {
	c.mnt, c.mntRoot, c.mntErr = cgroup2Mount(c.root)
	c.mntAt = c.n
}

// cgroupID returns the ID of a container's cgroup v2 path, 0 where it is
// gone or no cgroup2 is mounted. Its directory cannot be removed while the
// process read is in it, so the ID is kept with the process.
func (c *procCache) cgroupID(p string) uint64 {
	if id, ok := c.cgIDs[p]; ok {
		return id
	}
	if c.mntAt != c.n {
		c.mountinfo()
	}
	var id uint64
	if c.mntErr == nil {
		id = cgroupID(c.mnt, c.mntRoot, p)
	}
	if c.cgIDs == nil {
		c.cgIDs = map[string]uint64{}
	}
	c.cgIDs[p] = id
	return id
}

// listed is a process in /proc's listing, with its directory's inode.
type listed struct {
	pid uint32
	ino uint64
}

// list reads the PIDs in the procfs root and their directories' inodes
// (getdents64's d_ino), in the listing's order (ascending PIDs in procfs).
func (c *procCache) list() ([]listed, error) {
	fd, err := unix.Open(c.root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("listing processes: %w", err)
	}
	defer unix.Close(fd)
	if c.buf == nil {
		c.buf = make([]byte, 32<<10)
	}
	out := make([]listed, 0, len(c.procs)+16)
	for {
		n, err := unix.Getdents(fd, c.buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("listing processes in %s: %w", c.root, err)
		}
		if n <= 0 {
			return out, nil
		}
		out = parseDirents(c.buf[:n], out)
	}
}

// parseDirents appends the entries of getdents64's buffer whose names are
// PIDs. A linux_dirent64 is d_ino (8 bytes), d_off (8), d_reclen (2),
// d_type (1) and the NUL-terminated name.
func parseDirents(b []byte, out []listed) []listed {
	for len(b) >= 19 {
		reclen := int(binary.NativeEndian.Uint16(b[16:]))
		if reclen < 19 || reclen > len(b) {
			break
		}
		ino := binary.NativeEndian.Uint64(b[0:])
		name := b[19:reclen]
		b = b[reclen:]
		var pid uint64
		n := 0
		for ; n < len(name) && name[n] >= '0' && name[n] <= '9'; n++ {
			pid = pid*10 + uint64(name[n]-'0')
			if pid > 1<<32-1 {
				break
			}
		}
		if n == 0 || pid > 1<<32-1 || (n < len(name) && name[n] != 0) {
			continue
		}
		out = append(out, listed{uint32(pid), ino})
	}
	return out
}

// parseProcCgroup reads a /proc/PID/cgroup file: the cgroup v2 path (the
// "0::" line) and the container its paths name, the v2 line's first, then
// the v1 lines' (a hybrid host's runtimes may place a container in both).
func parseProcCgroup(b []byte) (v2 string, c cgroupContainer, ok bool) {
	var v1 []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		hier, rest, found := strings.Cut(sc.Text(), ":")
		if !found {
			continue
		}
		_, path, found := strings.Cut(rest, ":")
		if !found {
			continue
		}
		if hier == "0" {
			v2 = path
		} else {
			v1 = append(v1, path)
		}
	}
	if c, ok = parseCgroupPath(v2); ok {
		return v2, c, true
	}
	for _, p := range v1 {
		if c, ok = parseCgroupPath(p); ok {
			return v2, c, true
		}
	}
	return v2, cgroupContainer{}, false
}

// hasPtraceCap reports whether this process has CAP_SYS_PTRACE in effect
// (the CapEff line of self/status): without it, reading other users'
// processes' namespaces is refused; with it, only a few hardened processes'.
func hasPtraceCap(root string) bool {
	b, err := os.ReadFile(filepath.Join(root, "self/status"))
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "CapEff:"); ok {
			caps, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && caps&(1<<unix.CAP_SYS_PTRACE) != 0
		}
	}
	return false
}
