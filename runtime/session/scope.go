package session

import (
	"fmt"
	"sync"

	"github.com/cilium/ebpf"

	"github.com/skbtrace/skbtrace/codegen"
)

// Scope is what the pod filters (--pod, --namespace, --container,
// --netns) let through: the network namespaces they match now, by inode,
// with the name each is known by, and a way to hear when pods come and go.
// runtime/names' Resolver provides both.
type Scope struct {
	// Match returns the inodes matched now, each with its label
	// (default/web-0) or "".
	Match func() map[uint64]string
	// OnChange registers a function called after what Match returns may
	// have changed.
	OnChange func(func())
}

// scopeKeeper keeps codegen.ScopeMap equal to what the filters match.
type scopeKeeper struct {
	mu     sync.Mutex
	m      *ebpf.Map
	match  func() map[uint64]string
	in     map[uint64]string
	closed bool
	// say tells the user which namespaces join or leave (stderr).
	say func(format string, args ...any)
}

// keepScope fills the scope map before anything attaches, so that a
// matching pod's first packet is traced, and then follows the changes.
func (s *Session) keepScope(sc *Scope) error {
	m := s.coll.Maps[codegen.ScopeMap]
	if m == nil || sc == nil {
		return nil
	}
	k := &scopeKeeper{m: m, match: sc.Match, in: map[uint64]string{}, say: s.warn}
	if err := k.sync(false); err != nil {
		return err
	}
	s.scope = k
	if sc.OnChange != nil {
		sc.OnChange(func() { k.sync(true) })
	}
	return nil
}

// sync writes what Match returns now into the map: new namespaces in, the
// gone out; with tell, each change is said.
func (k *scopeKeeper) sync(tell bool) error {
	want := k.match()
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return nil
	}
	one := uint8(1)
	for inode, label := range want {
		if _, ok := k.in[inode]; !ok {
			if err := k.m.Put(uint32(inode), one); err != nil {
				return fmt.Errorf("let network namespace %d through the pod filters: %w", inode, err)
			}
			if tell {
				k.say("now tracing %s", scopeName(inode, label))
			}
		}
		k.in[inode] = label // its name, once learnt, for when it leaves
	}
	for inode, label := range k.in {
		if _, ok := want[inode]; ok {
			continue
		}
		if err := k.m.Delete(uint32(inode)); err != nil && tell {
			k.say("network namespace %d: %v", inode, err)
		}
		delete(k.in, inode)
		if tell {
			k.say("no longer tracing %s: it is gone", scopeName(inode, label))
		}
	}
	return nil
}

// close stops the keeper: the map closes with the session.
func (k *scopeKeeper) close() {
	k.mu.Lock()
	k.closed = true
	k.mu.Unlock()
}

// Scoped is how many network namespaces the pod filters let through now.
func (s *Session) Scoped() int {
	if s.scope == nil {
		return 0
	}
	s.scope.mu.Lock()
	defer s.scope.mu.Unlock()
	return len(s.scope.in)
}

func scopeName(inode uint64, label string) string {
	if label == "" {
		return fmt.Sprintf("network namespace %d", inode)
	}
	return fmt.Sprintf("%s (network namespace %d)", label, inode)
}
