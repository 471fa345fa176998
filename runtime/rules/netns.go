package rules

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// netnsPaths finds a file for each network namespace this host shows:
// skbtrace's own, every `ip netns` name in /run/netns and every process's
// /proc/PID/ns/net, by inode, the first path seen for each.
func netnsPaths() map[uint64]string {
	paths := map[uint64]string{}
	add := func(p string) {
		var st unix.Stat_t
		if unix.Stat(p, &st) == nil {
			if _, ok := paths[st.Ino]; !ok {
				paths[st.Ino] = p
			}
		}
	}
	add("/proc/self/ns/net")
	if ents, err := os.ReadDir("/run/netns"); err == nil {
		for _, e := range ents {
			add(filepath.Join("/run/netns", e.Name()))
		}
	}
	if ents, err := os.ReadDir("/proc"); err == nil {
		for _, e := range ents {
			if _, err := strconv.Atoi(e.Name()); err == nil {
				add("/proc/" + e.Name() + "/ns/net")
			}
		}
	}
	return paths
}

// selfNetns is the inode of skbtrace's own network namespace.
func selfNetns() uint64 {
	var st unix.Stat_t
	if unix.Stat("/proc/self/ns/net", &st) != nil {
		return 0
	}
	return st.Ino
}

// inNetns runs fn on a thread of its own that has entered the network
// namespace at path, and takes the thread back to its own namespace after
// it; sockets fn opens stay in that namespace. Where the way back fails,
// the thread stays locked and ends with the goroutine, so nothing else runs
// in that namespace by accident. (A thread that ends locked may be the
// process's main one, which Go keeps, wedged, instead of ending it: left in
// the other namespace, it would be what /proc/self/ns/net says, skbtrace's
// own namespace to every reader of that file.)
func inNetns(path string, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		self, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			errc <- err
			return
		}
		defer self.Close()
		f, err := os.Open(path)
		if err != nil {
			errc <- err
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("setns %s: %w", path, err)
			return
		}
		err = fn()
		if unix.Setns(int(self.Fd()), unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		errc <- err
	}()
	return <-errc
}

// netnsInodes resolves network namespaces given as ip netns names, paths
// or inode numbers; nil for none.
func netnsInodes(specs []string) (map[uint64]bool, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	m := map[uint64]bool{}
	for _, s := range specs {
		if n, err := strconv.ParseUint(s, 10, 64); err == nil {
			m[n] = true
			continue
		}
		path := s
		if !strings.Contains(s, "/") {
			path = "/run/netns/" + s
		}
		var st unix.Stat_t
		if err := unix.Stat(path, &st); err != nil {
			return nil, fmt.Errorf("network namespace %s: %w", s, err)
		}
		m[st.Ino] = true
	}
	return m, nil
}
