package names

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Selector chooses network namespaces by the names of what is in them.
// Criteria of different kinds are ANDed, the values within one kind ORed;
// the namespaces Netns names are added to the result as they are.
type Selector struct {
	// Pods are "NAMESPACE/NAME" with shell globs in either part
	// (path.Match); a bare "NAME" means any namespace.
	Pods []string
	// Namespaces are globs over Kubernetes namespaces.
	Namespaces []string
	// Containers are globs over container names (Kubernetes, podman, docker).
	Containers []string
	// Netns are network namespaces as ParseNetns reads them: an `ip netns`
	// name, a path to a namespace file, or an inode number.
	Netns []string
}

// Empty reports whether the selector chooses nothing at all (no criteria).
func (s Selector) Empty() bool {
	return len(s.Pods) == 0 && len(s.Namespaces) == 0 && len(s.Containers) == 0 && len(s.Netns) == 0
}

// Check returns an error a user understands for a bad glob or netns spec.
func (s Selector) Check() error {
	for _, p := range s.Pods {
		for _, part := range strings.SplitN(p, "/", 2) {
			if _, err := path.Match(part, ""); err != nil || part == "" {
				return fmt.Errorf("pod %q: want NAMESPACE/NAME or NAME, each a shell glob", p)
			}
		}
	}
	for _, kind := range []struct {
		what  string
		globs []string
	}{{"namespace", s.Namespaces}, {"container", s.Containers}} {
		for _, g := range kind.globs {
			if _, err := path.Match(g, ""); err != nil || g == "" {
				return fmt.Errorf("%s %q: not a shell glob", kind.what, g)
			}
		}
	}
	for _, n := range s.Netns {
		if _, err := ParseNetns(n); err != nil {
			return err
		}
	}
	return nil
}

// NetnsSpec is one network namespace as a user names it: exactly one of
// Name, Path and Inode is set.
type NetnsSpec struct {
	Name  string // an `ip netns` name, looked up in /run/netns
	Path  string // a namespace file: /run/netns/x, /proc/PID/ns/net
	Inode uint64
}

// ParseNetns reads a network namespace spec: an inode number ("4026532177",
// or "net:[4026532177]" as readlink /proc/PID/ns/net shows it), a path (any
// spec with a "/"), or an `ip netns` name.
func ParseNetns(spec string) (NetnsSpec, error) {
	s := strings.TrimSpace(spec)
	if strings.HasPrefix(s, "net:[") && strings.HasSuffix(s, "]") {
		s = s[len("net:[") : len(s)-1]
	}
	switch {
	case s == "":
		return NetnsSpec{}, errors.New("empty network namespace: want an ip netns name, a path such as /proc/PID/ns/net, or an inode number")
	case s[0] >= '0' && s[0] <= '9' && strings.Trim(s, "0123456789") == "":
		ino, err := strconv.ParseUint(s, 10, 64)
		if err != nil || ino == 0 {
			return NetnsSpec{}, fmt.Errorf("network namespace %q: not an inode number", spec)
		}
		return NetnsSpec{Inode: ino}, nil
	case strings.Contains(s, "/"):
		return NetnsSpec{Path: s}, nil
	case s == "." || s == "..":
		return NetnsSpec{}, fmt.Errorf("network namespace %q: not an ip netns name", spec)
	}
	return NetnsSpec{Name: s}, nil
}

// resolve returns the inode the spec names now: a name through the
// snapshot's `ip netns` table or else a stat of its file, a path by stat.
func (n NetnsSpec) resolve(t *tables, netnsDir string) (uint64, error) {
	if n.Inode != 0 {
		return n.Inode, nil
	}
	p := n.Path
	if n.Name != "" {
		if ino, ok := t.netnsNames[n.Name]; ok {
			return ino, nil
		}
		p = filepath.Join(netnsDir, n.Name)
	}
	var fsst unix.Statfs_t
	if err := unix.Statfs(p, &fsst); err != nil {
		return 0, fmt.Errorf("network namespace %s: %w", p, err)
	}
	if fsst.Type != unix.NSFS_MAGIC {
		return 0, fmt.Errorf("network namespace %s: not a namespace file", p)
	}
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		return 0, fmt.Errorf("network namespace %s: %w", p, err)
	}
	return st.Ino, nil
}

// Match returns the network namespaces the selector chooses now, by inode,
// with their identities: those whose pod, namespace and containers match
// every non-empty criterion, and those Netns names (a namespace not known
// yet matches by its inode, with an empty Identity). Bad specs (see Check)
// and namespaces that do not exist match nothing.
func (r *Resolver) Match(s Selector) map[uint64]Identity {
	t := r.snap.Load()
	out := map[uint64]Identity{}
	if len(s.Pods) > 0 || len(s.Namespaces) > 0 || len(s.Containers) > 0 {
		for ino, id := range t.netns {
			if s.matches(id) {
				out[ino] = id
			}
		}
	}
	for _, n := range s.Netns {
		spec, err := ParseNetns(n)
		if err != nil {
			continue
		}
		ino, err := spec.resolve(t, r.o.NetnsDir)
		if err != nil {
			continue
		}
		out[ino] = t.netns[ino]
	}
	return out
}

// matches reports whether id meets the selector's pod, namespace and
// container criteria.
func (s Selector) matches(id Identity) bool {
	if len(s.Pods) > 0 && (id.Pod == "" || !anyMatch(s.Pods, func(g string) bool {
		ns, name, ok := strings.Cut(g, "/")
		if !ok {
			return glob(g, id.Pod)
		}
		return glob(ns, id.Namespace) && glob(name, id.Pod)
	})) {
		return false
	}
	if len(s.Namespaces) > 0 && (id.Namespace == "" || !anyMatch(s.Namespaces, func(g string) bool { return glob(g, id.Namespace) })) {
		return false
	}
	if len(s.Containers) > 0 && !anyMatch(s.Containers, func(g string) bool {
		for _, c := range id.Containers {
			if glob(g, c) {
				return true
			}
		}
		return id.Container != "" && glob(g, id.Container)
	}) {
		return false
	}
	return true
}

// anyMatch reports whether f holds for any of globs.
func anyMatch(globs []string, f func(string) bool) bool {
	for _, g := range globs {
		if f(g) {
			return true
		}
	}
	return false
}

// glob is path.Match with a bad pattern matching nothing.
func glob(pattern, name string) bool {
	ok, err := path.Match(pattern, name)
	return err == nil && ok
}
