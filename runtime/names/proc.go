package names

import (
	"bufio"
	"bytes"
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
	pid     uint32
	netns   uint64 // the inode of /proc/PID/ns/net, 0 where it could not be read
	cgroup2 string // the path of its "0::" line, "" on a v1-only host
	cont    cgroupContainer
	hasCont bool // cont was read from one of its cgroup paths
}

// procScan is one pass over /proc.
type procScan struct {
	procs  []procInfo
	self   uint64 // the resolver's own network namespace
	denied int    // processes whose ns/net could not be read: permission denied
}

// scanProc reads every process's network namespace and cgroups under the
// procfs root. A process that exits meanwhile is left out; one whose
// namespace cannot be read (permission) is counted in denied, its cgroups
// still read.
func scanProc(root string) (procScan, error) {
	var s procScan
	var st unix.Stat_t
	if err := unix.Stat(filepath.Join(root, "self/ns/net"), &st); err != nil {
		return s, fmt.Errorf("reading this process's network namespace: %w", err)
	}
	s.self = st.Ino
	d, err := os.Open(root)
	if err != nil {
		return s, fmt.Errorf("listing processes: %w", err)
	}
	ents, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return s, fmt.Errorf("listing processes in %s: %w", root, err)
	}
	for _, name := range ents {
		pid, err := strconv.ParseUint(name, 10, 32)
		if err != nil {
			continue
		}
		p := procInfo{pid: uint32(pid)}
		dir := filepath.Join(root, name)
		if err := unix.Stat(dir+"/ns/net", &st); err == nil {
			p.netns = st.Ino
		} else if errors.Is(err, fs.ErrPermission) {
			s.denied++
		} else {
			continue // gone
		}
		b, err := os.ReadFile(dir + "/cgroup")
		if err != nil && p.netns == 0 {
			continue
		}
		p.cgroup2, p.cont, p.hasCont = parseProcCgroup(b)
		s.procs = append(s.procs, p)
	}
	return s, nil
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
