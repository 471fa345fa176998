package k8stest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// This file undoes what the components leave on the host: mounts,
// processes, cgroups, interfaces, directories.

// mountsUnder lists the mount points at or below dir, deepest first.
func mountsUnder(dir string) []string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	var mps []string
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 64*1024), 1024*1024)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) < 5 {
			continue
		}
		mp := strings.ReplaceAll(fields[4], `\040`, " ")
		if mp == dir || strings.HasPrefix(mp, dir+"/") {
			mps = append(mps, mp)
		}
	}
	sort.SliceStable(mps, func(i, j int) bool { return len(mps[i]) > len(mps[j]) })
	return mps
}

// unmountUnder detaches every mount at or below dir (several times over:
// a path can be mounted on more than once) and says what stays.
func unmountUnder(dir string) error {
	for range 8 {
		mps := mountsUnder(dir)
		if len(mps) == 0 {
			return nil
		}
		for _, mp := range mps {
			unix.Unmount(mp, unix.MNT_DETACH)
		}
	}
	if mps := mountsUnder(dir); len(mps) > 0 {
		return fmt.Errorf("still mounted: %s", strings.Join(mps, " "))
	}
	return nil
}

// procStart is a process's start time (field 22 of /proc/PID/stat), which
// tells a process from a later one that reuses its PID.
func procStart(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		f := strings.Fields(s[i+1:])
		if len(f) > 19 {
			return f[19]
		}
	}
	return ""
}

// cmdline is a process's argv joined by spaces.
func cmdline(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
}

// pids lists the processes on the machine.
func pids() []int {
	ents, _ := os.ReadDir("/proc")
	var ps []int
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			ps = append(ps, pid)
		}
	}
	return ps
}

// killMatching SIGKILLs every process whose command line contains all of
// the words, and waits (up to 5 s) for them to go. It returns those that
// stay.
func killMatching(words ...string) []string {
	var victims []int
	for _, pid := range pids() {
		if pid == os.Getpid() {
			continue
		}
		cl := cmdline(pid)
		match := cl != ""
		for _, w := range words {
			match = match && strings.Contains(cl, w)
		}
		if match {
			victims = append(victims, pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	return waitGone(victims)
}

// waitGone waits up to 5 s for the processes to end and names those that
// do not.
func waitGone(victims []int) []string {
	var left []string
	poll("processes end", 5*time.Second, 20*time.Millisecond, func() (bool, error) {
		left = left[:0]
		for _, pid := range victims {
			if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && !isZombie(b) {
				left = append(left, fmt.Sprintf("%d (%s)", pid, cmdline(pid)))
			}
		}
		return len(left) == 0, nil
	})
	return left
}

func isZombie(stat []byte) bool {
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && len(s) > i+2 && s[i+2] == 'Z'
}

// cgroupRoots are the mounted cgroup hierarchies: each v1 controller's
// directory and the unified one.
func cgroupRoots() []string {
	var roots []string
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := s.Text()
		i := strings.Index(line, " - ")
		if i < 0 {
			continue
		}
		fsType := strings.Fields(line[i+3:])[0]
		if fsType == "cgroup" || fsType == "cgroup2" {
			roots = append(roots, strings.Fields(line)[4])
		}
	}
	return roots
}

// removeCgroup kills the processes in cgroup rel (a path like /kubepods)
// and its children in every hierarchy and removes the directories,
// deepest first. It says what stays.
func removeCgroup(rel string) error {
	var dirs []string
	for _, root := range cgroupRoots() {
		top := filepath.Join(root, rel)
		filepath.WalkDir(top, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
	}
	if len(dirs) == 0 {
		return nil
	}
	var victims []int
	for _, d := range dirs {
		b, _ := os.ReadFile(filepath.Join(d, "cgroup.procs"))
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
				victims = append(victims, pid)
			}
		}
	}
	waitGone(victims)
	sort.SliceStable(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
	var left []string
	poll("cgroups removed", 10*time.Second, 50*time.Millisecond, func() (bool, error) {
		left = left[:0]
		for _, d := range dirs {
			if err := os.Remove(d); err != nil && !os.IsNotExist(err) {
				left = append(left, d)
			}
		}
		return len(left) == 0, nil
	})
	if len(left) > 0 {
		return fmt.Errorf("cgroups stay: %s", strings.Join(left, " "))
	}
	return nil
}

// deleteLink deletes a network interface if it exists.
func deleteLink(name string) error {
	if _, err := net.InterfaceByName(name); err != nil {
		return nil
	}
	_, err := run(10*time.Second, "ip", "link", "del", name)
	return err
}

// missing reports which of the paths do not exist, so that cleanup can
// remove only what a component created.
func missing(paths ...string) []string {
	var m []string
	for _, p := range paths {
		if _, err := os.Lstat(p); os.IsNotExist(err) {
			m = append(m, p)
		}
	}
	return m
}

// rmdirIfEmpty removes the directories that are empty, in order.
func rmdirIfEmpty(dirs ...string) {
	for _, d := range dirs {
		syscall.Rmdir(d)
	}
}
