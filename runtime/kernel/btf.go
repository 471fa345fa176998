package kernel

import "github.com/cilium/ebpf/btf"

// specCache holds the kernel's BTF once decoded: the checker reads it
// (BTF), and every program load that needs a target's BTF id shares it
// instead of decoding vmlinux's BTF again, which costs 20 ms each time.
var specCache = btf.NewCache()

// BTF returns the running kernel's BTF, decoded once per process.
func BTF() (*btf.Spec, error) { return specCache.Kernel() }

// SpecCache is the cache BTF decodes into, for ebpf.CollectionOptions: the
// programs a process loads share one decoding of the kernel's BTF.
func SpecCache() *btf.Cache { return specCache }
