package pipeline

import (
	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/internal/phase"
	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/runtime/kernel"
	"github.com/skbtrace/skbtrace/runtime/session"
)

// kernelTypes is where a script's kernel types come from: this kernel's BTF
// cache where it answers every lookup the check makes, else the whole BTF
// (the kernel's, or --btf FILE's), decoded once. The cache saves most of a
// one-liner's start: decoding the whole BTF and sk_buff's types in it.
type kernelTypes struct {
	file string
	spec *btf.Spec
	// rec records the lookups in the kernel's whole BTF, for the cache;
	// prev is the cache that missed, if any.
	rec  *kernel.RecordingTypes
	prev *kernel.CachedTypes
	// cached is the BTF cache that answered the check, if it did.
	cached *kernel.CachedTypes
}

// typeIDs gives the kernel's type IDs of the programs' targets, where the
// BTF cache answered the check: loading them then decodes no BTF.
func (k *kernelTypes) typeIDs() session.KernelTypeIDs {
	if k.cached == nil {
		return nil
	}
	return k.cached
}

// whole returns the whole BTF, decoding it on first use.
func (k *kernelTypes) whole() (*btf.Spec, error) {
	if k.spec == nil {
		spec, err := loadBTF(k.file)
		if err != nil {
			return nil, err
		}
		k.spec = spec
		phase.Mark("btf")
	}
	return k.spec, nil
}

// check checks the script (checkScript). It tries the kernel's BTF cache
// first, keeping what it says meanwhile; where the cache was asked for a
// name it does not hold, its answers may differ from the whole BTF's, so
// what it said is dropped and the script (which checking does not change)
// is checked again with the whole BTF, as if there were no cache. skb:
// probes need no BTF to attach with kprobes or kprobe-multi (their
// functions come from discovery's own cache), so they too are checked
// against the cache first: on the fentry backend their loads decode the
// whole BTF later, and the cache's read is all it costs.
func (k *kernelTypes) check(cfg Config, script *lang.Script) (*lang.Script, *check.Info, error) {
	if k.file == "" {
		if cached, err := kernel.LoadCachedTypes(); err == nil {
			var said []string
			quiet := cfg
			quiet.Warn = func(msg string) { said = append(said, msg) }
			checked, info, err := checkScript(quiet, script, func() (check.BTF, error) { return cached, nil })
			if !cached.Missed() {
				for _, msg := range said {
					cfg.warn(msg)
				}
				k.cached = cached
				return checked, info, err
			}
			k.prev = cached
		}
	}
	return checkScript(cfg, script, func() (check.BTF, error) {
		spec, err := k.whole()
		if err != nil || k.file != "" {
			return spec, err
		}
		k.rec = kernel.RecordTypes(spec)
		return k.rec, nil
	})
}

// save adds the names the check looked up in the whole BTF to the kernel's
// BTF cache, with targets (the names the programs' loads looked up:
// session.TracingTargets). Where the cache answered the check but lacks
// some target, the loads decoded the whole BTF for it: the targets join the
// cache from that. It runs as skbtrace ends, so that tracing starts no
// later.
func (k *kernelTypes) save(targets []string) {
	switch {
	case k.rec != nil:
		k.rec.Note(targets...)
		kernel.SaveTypes(k.rec, k.prev)
	case k.cached != nil && k.file == "" && !k.cached.Holds(targets):
		spec, err := kernel.BTF()
		if err != nil {
			return
		}
		rec := kernel.RecordTypes(spec)
		rec.Note(targets...)
		kernel.SaveTypes(rec, k.cached)
	}
}
