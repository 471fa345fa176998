package stdlib

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Sizes of the strings username and cgroup_path make.
const (
	UsernameLen   = 32
	CgroupPathLen = 128
)

// Usernames are the names of /etc/passwd's users by uid, which
// username reads (the table is filled when the script is compiled).
func Usernames() map[uint64]string {
	names := map[uint64]string{}
	f, err := os.Open("/etc/passwd")
	if err != nil {
		return names
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.Split(sc.Text(), ":")
		if len(parts) < 3 {
			continue
		}
		uid, err := strconv.ParseUint(parts[2], 10, 32)
		if err != nil {
			continue
		}
		if _, seen := names[uid]; !seen {
			names[uid] = parts[0]
		}
	}
	return names
}

// cgroup2Mount is where the cgroup v2 hierarchy is mounted: by
// /proc/self/mountinfo, /sys/fs/cgroup where it says nothing (a host with
// cgroup v1 too mounts it at /sys/fs/cgroup/unified).
func cgroup2Mount() string {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "/sys/fs/cgroup"
	}
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		for i, f := range fields {
			if f == "-" && i+1 < len(fields) && fields[i+1] == "cgroup2" && len(fields) > 4 {
				return fields[4]
			}
		}
	}
	return "/sys/fs/cgroup"
}

// maxCgroups bounds the cgroups CgroupPaths lists.
const maxCgroups = 16384

// CgroupPaths are the cgroup v2 directories' paths by their ids (the
// directory's inode), as bpftrace prints them: unified:/system.slice/...
// (cgroup2 is "unified"), "unified:/" the root.
func CgroupPaths() map[uint64]string {
	paths := map[uint64]string{}
	root := cgroup2Mount()
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if len(paths) >= maxCgroups {
			return filepath.SkipAll
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		st, ok := info.Sys().(*syscall.Stat_t)
		if !ok {
			return nil
		}
		rel := strings.TrimPrefix(p, root)
		if rel == "" {
			rel = "/"
		}
		paths[st.Ino] = "unified:" + rel
		return nil
	})
	return paths
}
