package session

import (
	"errors"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/link"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/internal/testkit"
	"github.com/skbtrace/skbtrace/runtime/kernel"
)

// TestLoadByKernelTypeID loads a tp_btf program by its target's type ID
// from a BTF cache, with a map it references, and attaches it; a target the
// cache does not hold is left to cilium/ebpf.
func TestLoadByKernelTypeID(t *testing.T) {
	spec, cached := cachedKfreeSkbTypes(t)
	var td *btf.Typedef
	if err := spec.TypeByName("btf_trace_kfree_skb", &td); err != nil {
		t.Fatal(err)
	}
	want, _ := spec.TypeID(td)
	if got, ok := cached.KernelTypeID("btf_trace_kfree_skb", new(*btf.Typedef)); !ok || got != want {
		t.Fatalf("KernelTypeID = %d, %v; want %d", got, ok, want)
	}
	m, err := ebpf.NewMap(&ebpf.MapSpec{Name: "counts", Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	prog := func(target string) *codegen.Program {
		return &codegen.Program{Name: "p", Prog: &ebpf.ProgramSpec{Name: "p", Type: ebpf.Tracing, AttachType: ebpf.AttachTraceRawTp,
			AttachTo: target, License: "GPL", Instructions: asm.Instructions{
				asm.LoadMapPtr(asm.R1, 0).WithReference("counts"),
				asm.JEq.Imm(asm.R1, 0, "out"),
				asm.Mov.Imm(asm.R0, 0).WithSymbol("out"),
				asm.Return(),
			}}}
	}
	p, err := loadByKernelTypeID(prog("kfree_skb"), map[string]*ebpf.Map{"counts": m}, cached)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.Type() != ebpf.Tracing {
		t.Errorf("loaded a %s program, want tracing", p.Type())
	}
	l, err := link.AttachTracing(link.TracingOptions{Program: p, AttachType: ebpf.AttachTraceRawTp})
	if err != nil {
		t.Fatalf("attach: %v", err)
	}
	l.Close()
	if _, err := loadByKernelTypeID(prog("consume_skb"), map[string]*ebpf.Map{"counts": m}, cached); !errors.Is(err, errNotByID) {
		t.Errorf("a target the cache does not hold: %v, want errNotByID", err)
	}
	if _, err := loadByKernelTypeID(prog("kfree_skb"), map[string]*ebpf.Map{}, cached); !errors.Is(err, errNotByID) {
		t.Errorf("a map that is not there: %v, want errNotByID", err)
	}
}

// cachedKfreeSkbTypes skips where loading by a cached type ID does not
// apply, else writes a BTF cache (in a temporary XDG_CACHE_HOME) that holds
// btf_trace_kfree_skb and reads it back: the kernel's BTF and the cache.
func cachedKfreeSkbTypes(t *testing.T) (*btf.Spec, *kernel.CachedTypes) {
	t.Helper()
	if !kernel.NoPrealloc() {
		t.Skip("loading by a cached type ID is for kernels of 6.1 on")
	}
	spec := testkit.KernelBTF(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	rec := kernel.RecordTypes(spec)
	rec.TypeByName("btf_trace_kfree_skb", new(*btf.Typedef))
	if err := kernel.SaveTypes(rec, nil); err != nil {
		t.Skipf("this kernel has no BTF cache: %v", err)
	}
	cached, err := kernel.LoadCachedTypes()
	if err != nil {
		t.Fatal(err)
	}
	return spec, cached
}
