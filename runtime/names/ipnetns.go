package names

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// ipNetns reads the `ip netns` names: each file in dir (/run/netns) is a
// bind mount of a network namespace, whose inode it returns by name.
// A missing dir is no names, not an error.
func ipNetns(dir string) (map[string]uint64, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("listing ip netns names: %w", err)
	}
	out := make(map[string]uint64, len(ents))
	var st unix.Stat_t
	for _, e := range ents {
		// A file whose namespace is gone (or never mounted) stats as the
		// empty file on the parent filesystem, not as nsfs.
		var fsst unix.Statfs_t
		p := filepath.Join(dir, e.Name())
		if unix.Statfs(p, &fsst) != nil || fsst.Type != unix.NSFS_MAGIC {
			continue
		}
		if unix.Stat(p, &st) == nil {
			out[e.Name()] = st.Ino
		}
	}
	return out, nil
}
