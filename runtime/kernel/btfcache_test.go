package kernel

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/internal/testkit"
)

// TestBTFCacheAnswersAsTheWholeBTF records lookups in the kernel's BTF,
// caches them, and asks the cache again: every cached name gets the whole
// BTF's answer (the same types, deeply, or the same error), and a name no
// lookup asked for is a miss, not a wrong answer.
func TestBTFCacheAnswersAsTheWholeBTF(t *testing.T) {
	spec := testkit.KernelBTF(t)
	type lookup struct {
		name string
		typ  func() any // a fresh **T for TypeByName
	}
	lookups := []lookup{
		{"sk_buff", func() any { return new(*btf.Struct) }},
		{"skb_drop_reason", func() any { return new(*btf.Enum) }},
		{"btf_trace_kfree_skb", func() any { return new(*btf.Typedef) }},
		{"task_struct", func() any { return new(*btf.Struct) }},
		{"kfree_skb_reason", func() any { return new(*btf.Func) }},
		{"sk_buff", func() any { return new(*btf.Union) }},                       // the name exists, not as a union
		{"no_such_struct_in_any_kernel", func() any { return new(*btf.Struct) }}, // the name does not exist
	}
	rec := RecordTypes(spec)
	for _, l := range lookups {
		rec.TypeByName(l.name, l.typ())
	}
	raw, err := encodeBTFCache(spec, rec.looked())
	if err != nil {
		t.Fatal(err)
	}
	cached, err := decodeBTFCache(raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lookups {
		want, got := l.typ(), l.typ()
		werr, gerr := spec.TypeByName(l.name, want), cached.TypeByName(l.name, got)
		if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
			t.Errorf("TypeByName(%q, %T): error %v, want %v", l.name, got, gerr, werr)
			continue
		}
		if !reflect.DeepEqual(want, got) {
			t.Errorf("TypeByName(%q, %T): the cached type differs from the kernel's", l.name, got)
		}
		wantAll, werr := spec.AnyTypesByName(l.name)
		gotAll, gerr := cached.AnyTypesByName(l.name)
		if (werr == nil) != (gerr == nil) || errors.Is(werr, btf.ErrNotFound) != errors.Is(gerr, btf.ErrNotFound) {
			t.Errorf("AnyTypesByName(%q): error %v, want %v", l.name, gerr, werr)
		}
		if !reflect.DeepEqual(wantAll, gotAll) {
			t.Errorf("AnyTypesByName(%q): the cached types differ from the kernel's", l.name)
		}
	}
	if cached.Missed() {
		t.Fatal("the cache missed a name it holds")
	}
	var s *btf.Struct
	if err := cached.TypeByName("net_device", &s); err == nil || !cached.Missed() {
		t.Errorf("a name no lookup asked for: error %v, missed %v; want an error and a miss", err, cached.Missed())
	}
	if cached2, _ := decodeBTFCache(raw); cached2.Spec() != nil || !cached2.Missed() {
		t.Error("asked for the whole BTF, the cache must miss")
	}
}

// TestBTFCacheRefusesDamage: a cache file cut short, changed or of another
// version is not used.
func TestBTFCacheRefusesDamage(t *testing.T) {
	spec := testkit.KernelBTF(t)
	raw, err := encodeBTFCache(spec, []string{"skb_drop_reason"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := decodeBTFCache(raw); err != nil {
		t.Fatalf("the cache as written: %v", err)
	}
	flipped := bytes.Clone(raw)
	flipped[len(flipped)-10] ^= 1
	for what, b := range map[string][]byte{
		"cut short":     raw[:len(raw)-100],
		"changed":       flipped,
		"other version": bytes.Replace(raw, []byte(btfCacheVersion), []byte("skbtrace-btf-0"), 1),
		"empty":         nil,
	} {
		if _, err := decodeBTFCache(b); err == nil {
			t.Errorf("%s: decoded", what)
		}
	}
}

func TestGNUBuildID(t *testing.T) {
	note := func(name string, typ uint32, desc []byte) []byte {
		var b bytes.Buffer
		n := append([]byte(name), 0)
		binary.Write(&b, binary.NativeEndian, [3]uint32{uint32(len(n)), uint32(len(desc)), typ})
		b.Write(n)
		b.Write(make([]byte, (4-len(n)%4)%4))
		b.Write(desc)
		b.Write(make([]byte, (4-len(desc)%4)%4))
		return b.Bytes()
	}
	id := []byte{0xe4, 0xf1, 0x8d, 0x9d, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	notes := append(note("Xen", 1, []byte{1, 2, 3}), note("GNU", 3, id)...)
	if got, ok := gnuBuildID(notes); !ok || !bytes.Equal(got, id) {
		t.Errorf("gnuBuildID = %x, %v; want %x", got, ok, id)
	}
	if _, ok := gnuBuildID(note("Linux", 3, id)); ok {
		t.Error("a note of another name taken for the build ID")
	}
	if _, ok := gnuBuildID(notes[:len(notes)-4]); ok {
		t.Error("a note cut short taken for the build ID")
	}
}

// TestSaveTypesStaysSmall: names join the cache; a run that looked up more
// names than the cache may hold leaves it as it was.
func TestSaveTypesStaysSmall(t *testing.T) {
	spec := testkit.KernelBTF(t)
	if _, err := kernelBTFKey(); err != nil {
		t.Skipf("no BTF cache on this kernel: %v", err)
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	save := func(names ...string) {
		t.Helper()
		rec := RecordTypes(spec)
		for _, n := range names {
			rec.AnyTypesByName(n)
		}
		prev, _ := LoadCachedTypes()
		if err := SaveTypes(rec, prev); err != nil {
			t.Fatal(err)
		}
	}
	holds := func() []string {
		t.Helper()
		c, err := LoadCachedTypes()
		if err != nil {
			t.Fatal(err)
		}
		return slices.Sorted(maps.Keys(c.names))
	}
	save("sk_buff", "skb_drop_reason")
	save("task_struct")
	if got, want := holds(), []string{"sk_buff", "skb_drop_reason", "task_struct"}; !slices.Equal(got, want) {
		t.Errorf("the cache holds %q, want %q", got, want)
	}
	many := make([]string, btfCacheMaxNames+1)
	for i := range many {
		many[i] = fmt.Sprintf("no_such_type_%d", i)
	}
	save(many...)
	if got := holds(); len(got) != 3 {
		t.Errorf("after a run of %d names the cache holds %d names, want the 3 it held", len(many), len(got))
	}
}

// TestBTFCacheHoldsNotedTargets notes the targets of tracing programs
// (which a program's load looks up, not the check) as a run does: the
// cache holds them, without a miss, and gives each the kernel's own type
// ID, as cilium/ebpf finds it in the whole BTF; a name not noted is not
// held.
func TestBTFCacheHoldsNotedTargets(t *testing.T) {
	spec := testkit.KernelBTF(t)
	rec := RecordTypes(spec)
	targets := []string{"skb_clone", "kfree_skbmem", "btf_trace_kfree_skb"}
	rec.Note(targets...)
	raw, err := encodeBTFCache(spec, rec.looked())
	if err != nil {
		t.Fatal(err)
	}
	cached, err := decodeBTFCache(raw)
	if err != nil {
		t.Fatal(err)
	}
	if !cached.Holds(targets) {
		t.Fatalf("the cache does not hold %v", targets)
	}
	if cached.Holds([]string{"skb_clone", "tcp_v4_rcv"}) {
		t.Errorf("the cache holds tcp_v4_rcv, which was not noted")
	}
	for _, name := range targets[:2] {
		var fn *btf.Func
		if err := spec.TypeByName(name, &fn); err != nil {
			t.Skipf("this kernel's BTF has no %s: %v", name, err)
		}
		want, err := spec.TypeID(fn)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := cached.KernelTypeID(name, new(*btf.Func))
		if !ok || got != want {
			t.Errorf("KernelTypeID(%s) = %d, %v; the kernel's is %d", name, got, ok, want)
		}
	}
	if cached.Missed() {
		t.Errorf("Holds and KernelTypeID counted as misses")
	}
}
