package names

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// cgroup2Mount finds where the cgroup v2 hierarchy is mounted, from the
// procfs root's self/mountinfo: /sys/fs/cgroup on a v2 host,
// /sys/fs/cgroup/unified on a hybrid one. root is the mount's root within
// the hierarchy ("/" outside a cgroup namespace).
func cgroup2Mount(proc string) (mountpoint, root string, err error) {
	b, err := os.ReadFile(filepath.Join(proc, "self/mountinfo"))
	if err != nil {
		return "", "", fmt.Errorf("finding the cgroup2 mount: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		// 41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok || !strings.HasPrefix(post, "cgroup2 ") {
			continue
		}
		f := strings.Fields(pre)
		if len(f) < 5 {
			continue
		}
		return unescapeMount(f[4]), unescapeMount(f[3]), nil
	}
	return "", "", fmt.Errorf("finding the cgroup2 mount: none in %s/self/mountinfo", proc)
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var v byte
			if _, err := fmt.Sscanf(s[i+1:i+4], "%03o", &v); err == nil {
				b.WriteByte(v)
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// cgroupID stats a cgroup v2 path's directory under the mount: its inode
// is the cgroup ID bpf_get_current_cgroup_id returns for a task in it (on
// 64-bit kernels kernfs's inode number is the node's 64-bit ID; this was
// checked against bpftrace's cgroup builtin on a hybrid host). It is 0
// where the path no longer exists.
func cgroupID(mountpoint, root, p string) uint64 {
	rel := p
	if root != "/" {
		rel = strings.TrimPrefix(p, root)
	}
	var st unix.Stat_t
	if err := unix.Stat(filepath.Join(mountpoint, rel), &st); err != nil {
		return 0
	}
	return st.Ino
}
