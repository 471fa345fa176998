package names

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// fakeProc is a procfs root in a temporary directory: self/ns/net,
// self/mountinfo (a cgroup2 mount at cg) and per process ns/net (a file
// whose inode stands for the namespace) and cgroup.
type fakeProc struct {
	t          *testing.T
	root, cg   string
	namespaces map[string]string // a namespace's name → the file whose inode it is
}

func newFakeProc(t *testing.T) *fakeProc {
	f := &fakeProc{t: t, root: t.TempDir(), cg: t.TempDir(), namespaces: map[string]string{}}
	f.write("self/ns/net", "")
	f.write("self/mountinfo", fmt.Sprintf("41 31 0:38 / %s rw,relatime - cgroup2 cgroup2 rw\n", f.cg))
	return f
}

func (f *fakeProc) write(rel, text string) {
	p := filepath.Join(f.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// start makes /proc/PID in namespace ns (a hard link: one inode per name)
// and the cgroup of container id ("" none).
func (f *fakeProc) start(pid int, ns, id string) {
	f.t.Helper()
	dir := filepath.Join(f.root, fmt.Sprint(pid))
	if err := os.MkdirAll(filepath.Join(dir, "ns"), 0o755); err != nil {
		f.t.Fatal(err)
	}
	f.setns(pid, ns)
	f.move(pid, id)
}

// setns puts a process in namespace ns.
func (f *fakeProc) setns(pid int, ns string) {
	f.t.Helper()
	src, ok := f.namespaces[ns]
	if !ok {
		src = filepath.Join(f.t.TempDir(), "ns")
		if err := os.WriteFile(src, nil, 0o644); err != nil {
			f.t.Fatal(err)
		}
		f.namespaces[ns] = src
	}
	p := filepath.Join(f.root, fmt.Sprint(pid), "ns/net")
	os.Remove(p)
	if err := os.Link(src, p); err != nil {
		f.t.Fatal(err)
	}
}

// move puts a process in container id's cgroup ("" the host's).
func (f *fakeProc) move(pid int, id string) {
	f.t.Helper()
	path := "/system.slice/ssh.service"
	if id != "" {
		path = "/system.slice/docker-" + id + ".scope"
	}
	if err := os.MkdirAll(filepath.Join(f.cg, path), 0o755); err != nil {
		f.t.Fatal(err)
	}
	f.write(fmt.Sprintf("%d/cgroup", pid), "0::"+path+"\n")
}

func (f *fakeProc) exit(pid int) {
	if err := os.RemoveAll(filepath.Join(f.root, fmt.Sprint(pid))); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fakeProc) ino(ns string) uint64 { return inodeOf(f.t, f.namespaces[ns]) }

// find returns what a scan said of pid.
func find(s procScan, pid int) (procInfo, bool) {
	for _, p := range s.procs {
		if p.pid == uint32(pid) {
			return p, true
		}
	}
	return procInfo{}, false
}

// TestProcCache: a refresh reads new processes, forgets those gone, reads
// again a PID whose directory is new (reused), re-reads a young process at
// the next refresh and a settled one within procRecheck refreshes, and
// reads nothing else.
func TestProcCache(t *testing.T) {
	const idA = "871ab0bb48b59543f2dc51c3decae2ec53b4b8a3947084e9ffa54bcab8645e80"
	const idB = "0f4a4b3e8c1d4a559f7e2b6f0c1d2e3f871ab0bb48b59543f2dc51c3decae2ec"
	f := newFakeProc(t)
	f.start(1, "host", "")
	f.start(100, "a", idA)
	c := procCache{root: f.root}
	scan := func() (procScan, bool) {
		t.Helper()
		s, changed, err := c.scan()
		if err != nil {
			t.Fatal(err)
		}
		return s, changed
	}
	s, changed := scan()
	if !changed || len(s.procs) != 2 || s.self == 0 {
		t.Fatalf("first scan: %+v, changed %v", s, changed)
	}
	p, _ := find(s, 100)
	if p.netns != f.ino("a") || !p.hasCont || p.cont.ID != idA || p.cgroupID != inodeOf(t, filepath.Join(f.cg, p.cgroup2)) {
		t.Errorf("pid 100: %+v", p)
	}
	if _, changed := scan(); changed {
		t.Error("a scan with nothing changed said changed")
	}

	// A new process; one gone.
	f.start(200, "host", "")
	f.exit(1)
	s, changed = scan()
	if _, ok := find(s, 200); !ok || !changed || len(s.procs) != 2 {
		t.Errorf("after a start and an exit: %+v, changed %v", s.procs, changed)
	}
	if _, ok := c.procs[1]; ok {
		t.Error("pid 1 is still cached")
	}

	// The young process setns's and moves into a container: seen at the
	// next refresh.
	f.setns(200, "b")
	f.move(200, idB)
	s, changed = scan()
	if p, _ := find(s, 200); !changed || p.netns != f.ino("b") || p.cont.ID != idB {
		t.Errorf("a young process's setns and move: %+v, changed %v", p, changed)
	}

	// A reused PID: a new /proc/PID directory (another inode: the old one
	// kept aside, as procfs's counter never gives the same) is read at once.
	old := filepath.Join(f.root, "100")
	if err := os.Rename(old, old+".old"); err != nil {
		t.Fatal(err)
	}
	f.start(100, "b", idB)
	s, _ = scan()
	if p, _ := find(s, 100); p.netns != f.ino("b") || p.cont.ID != idB {
		t.Errorf("a reused PID: %+v", p)
	}

	// A settled process (pid 100's gaps grown) that moves is seen within
	// procRecheck refreshes, not at once.
	for range 4 * procRecheck {
		scan()
	}
	f.setns(100, "a")
	n := 0
	for ; n <= procRecheck; n++ {
		s, _ = scan()
		if p, _ := find(s, 100); p.netns == f.ino("a") {
			break
		}
	}
	if n == 0 || n > procRecheck {
		t.Errorf("a settled process's setns was seen after %d refreshes, want 1 to %d", n+1, procRecheck)
	}

	// A steady refresh reads nothing: no entry is replaced.
	for range 4 * procRecheck {
		scan()
	}
	before := map[uint32]*procEntry{}
	for pid, e := range c.procs {
		before[pid] = e
	}
	reads := 0
	for range procRecheck {
		scan()
		for pid, e := range c.procs {
			if before[pid] != e {
				reads++
				before[pid] = e
			}
		}
	}
	if reads != len(c.procs) {
		t.Errorf("%d reads in %d steady refreshes of %d processes, want one each", reads, procRecheck, len(c.procs))
	}
}

// TestParseDirents reads PIDs and inodes from a getdents64 buffer and skips
// other names.
func TestParseDirents(t *testing.T) {
	var b []byte
	add := func(ino uint64, name string) {
		rec := make([]byte, (19+len(name)+1+7)&^7)
		for i := range 8 {
			rec[i] = byte(ino >> (8 * i))
		}
		rec[16], rec[17] = byte(len(rec)), byte(len(rec)>>8)
		copy(rec[19:], name)
		b = append(b, rec...)
	}
	add(10, "1")
	add(11, "self")
	add(12, "4294967295")
	add(13, "4294967296")
	add(14, "12a")
	add(15, "4242")
	got := parseDirents(b, nil)
	want := []listed{{1, 10}, {4294967295, 12}, {4242, 15}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("parseDirents = %v, want %v", got, want)
	}
}
