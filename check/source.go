package check

import "github.com/cilium/ebpf/btf"

// BTF is where the checker reads the kernel's types: a *btf.Spec, or a
// stand-in that answers by name for fewer types (kernel.CachedTypes, this
// kernel's BTF cache). Both answer as a *btf.Spec does.
type BTF interface {
	TypeByName(name string, typ any) error
	AnyTypesByName(name string) ([]btf.Type, error)
}

// wholeSpec returns the spec behind b for what needs all of it: a walk over
// every type (btfIndex), a module's BTF split on top of it. nil where b holds
// only some types; b then notes that it was asked.
func wholeSpec(b BTF) *btf.Spec {
	switch s := b.(type) {
	case *btf.Spec:
		return s
	case interface{ Spec() *btf.Spec }:
		return s.Spec()
	}
	return nil
}
