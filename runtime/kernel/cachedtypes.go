package kernel

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"

	"github.com/cilium/ebpf/btf"
)

// Decoding the kernel's whole BTF (some 130 000 types) and then sk_buff's
// graph of types takes most of a one-liner's start. A script needs a few
// names of it: CachedTypes keeps, per kernel, the types that earlier runs
// looked up (btfcache.go), and answers from them as the whole BTF would.
// Asked for a name no run looked up, it cannot know the answer: it says it
// missed, and the caller checks the script again with the whole BTF, through
// RecordingTypes, whose names then join the cache.

// errNotCached answers a lookup CachedTypes cannot answer.
var errNotCached = errors.New("not in this kernel's BTF cache")

// cachedName is what the whole BTF answered for a name: the types of that
// name (their IDs in the cache's spec, in the whole BTF's order, and in the
// kernel's BTF), or none (btf.ErrNotFound).
type cachedName struct {
	found     bool
	ids       []btf.TypeID
	kernelIDs []btf.TypeID
}

// CachedTypes answers type lookups from this kernel's BTF cache. It
// implements check.BTF.
type CachedTypes struct {
	spec  *btf.Spec
	names map[string]cachedName

	mu     sync.Mutex
	missed bool
}

func (c *CachedTypes) lookup(name string) (cachedName, bool) {
	n, ok := c.names[name]
	if !ok {
		c.mu.Lock()
		c.missed = true
		c.mu.Unlock()
	}
	return n, ok
}

// TypeByName is btf.Spec's TypeByName: the cache's spec holds every type of
// a cached name, so it answers as the whole BTF does.
func (c *CachedTypes) TypeByName(name string, typ any) error {
	if _, ok := c.lookup(name); !ok {
		return fmt.Errorf("%s: %w", name, errNotCached)
	}
	return c.spec.TypeByName(name, typ)
}

// AnyTypesByName is btf.Spec's AnyTypesByName.
func (c *CachedTypes) AnyTypesByName(name string) ([]btf.Type, error) {
	n, ok := c.lookup(name)
	if !ok {
		return nil, fmt.Errorf("%s: %w", name, errNotCached)
	}
	if !n.found {
		return nil, btf.ErrNotFound
	}
	out := make([]btf.Type, 0, len(n.ids))
	for _, id := range n.ids {
		t, err := c.spec.TypeByID(id)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// KernelTypeID returns the kernel's BTF type ID of the one type of that
// name and Go type (typ is a **T, as for TypeByName), where the cache holds
// it; it does not count as a miss.
func (c *CachedTypes) KernelTypeID(name string, typ any) (btf.TypeID, bool) {
	n, ok := c.names[name]
	if !ok || c.spec.TypeByName(name, typ) != nil {
		return 0, false
	}
	t, ok := reflect.ValueOf(typ).Elem().Interface().(btf.Type)
	if !ok {
		return 0, false
	}
	id, err := c.spec.TypeID(t)
	if err != nil {
		return 0, false
	}
	if i := slices.Index(n.ids, id); i >= 0 {
		return n.kernelIDs[i], true
	}
	return 0, false
}

// Spec is asked for by what needs the whole BTF: the cache has not got it.
func (c *CachedTypes) Spec() *btf.Spec {
	c.mu.Lock()
	c.missed = true
	c.mu.Unlock()
	return nil
}

// Holds reports whether the cache holds every one of names (an answer for
// each); it does not count as a miss.
func (c *CachedTypes) Holds(names []string) bool {
	for _, n := range names {
		if _, ok := c.names[n]; !ok {
			return false
		}
	}
	return true
}

// Missed reports whether a lookup asked for what the cache does not hold:
// the answers given may then differ from the whole BTF's.
func (c *CachedTypes) Missed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.missed
}

// RecordingTypes is the kernel's whole BTF, noting the names looked up in
// it for SaveTypes. It implements check.BTF.
type RecordingTypes struct {
	spec *btf.Spec

	mu    sync.Mutex
	names map[string]bool
}

// RecordTypes records the lookups made in spec.
func RecordTypes(spec *btf.Spec) *RecordingTypes {
	return &RecordingTypes{spec: spec, names: map[string]bool{}}
}

func (r *RecordingTypes) note(name string) {
	r.mu.Lock()
	r.names[name] = true
	r.mu.Unlock()
}

// Note records names as looked up: the targets of tracing programs,
// which their loads look up in the whole BTF, not the check.
func (r *RecordingTypes) Note(names ...string) {
	for _, n := range names {
		r.note(n)
	}
}

// TypeByName is btf.Spec's TypeByName.
func (r *RecordingTypes) TypeByName(name string, typ any) error {
	r.note(name)
	return r.spec.TypeByName(name, typ)
}

// AnyTypesByName is btf.Spec's AnyTypesByName.
func (r *RecordingTypes) AnyTypesByName(name string) ([]btf.Type, error) {
	r.note(name)
	return r.spec.AnyTypesByName(name)
}

// Spec returns the whole BTF.
func (r *RecordingTypes) Spec() *btf.Spec { return r.spec }

// looked returns the names looked up so far.
func (r *RecordingTypes) looked() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.names))
	for n := range r.names {
		out = append(out, n)
	}
	return out
}
