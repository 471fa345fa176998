package session

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/cilium/ebpf"

	"github.com/skbtrace/skbtrace/runtime/kernel"
)

// The kernel verifies and compiles a program in the thread that loads it,
// and verifies programs of root in parallel: where a script has many
// programs, newCollection loads them on as many threads as the process may
// run at once, after the maps. (A script of 200,000 probes is some 7,000
// programs; cilium/ebpf's collection loads them one after the other.)

// parallelMin is how many programs a script needs before they load on
// several threads: fewer load in about a millisecond each.
const parallelMin = 32

// newCollection is ebpf.NewCollectionWithOptions, with the programs that
// need no kernel BTF to load (tracepoints, kprobes, perf events, BEGIN...)
// loaded on several threads where there are many. Its errors name the
// program, as cilium/ebpf's do ("program NAME: ...").
func newCollection(cs *ebpf.CollectionSpec) (*ebpf.Collection, error) {
	opts := ebpf.CollectionOptions{Cache: kernel.SpecCache()}
	workers := runtime.GOMAXPROCS(0)
	var par []string
	for name, ps := range cs.Programs {
		if ps.Type != ebpf.Tracing && ps.Type != ebpf.LSM && ps.Type != ebpf.Extension {
			par = append(par, name)
		}
	}
	if len(par) < parallelMin || workers < 2 {
		return ebpf.NewCollectionWithOptions(cs, opts)
	}
	slices.Sort(par)
	base := &ebpf.CollectionSpec{Maps: cs.Maps, Programs: map[string]*ebpf.ProgramSpec{}}
	for name, ps := range cs.Programs {
		if _, ok := slices.BinarySearch(par, name); !ok {
			base.Programs[name] = ps
		}
	}
	coll, err := ebpf.NewCollectionWithOptions(base, opts)
	if err != nil {
		return nil, err
	}
	progs := make([]*ebpf.Program, len(par))
	errs := make([]error, len(par))
	var next atomic.Int64
	var failed atomic.Bool
	var wg sync.WaitGroup
	for range min(workers, len(par)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !failed.Load() {
				i := int(next.Add(1) - 1)
				if i >= len(par) {
					return
				}
				progs[i], errs[i] = loadWithMaps(cs.Programs[par[i]], coll.Maps)
				if errs[i] != nil {
					errs[i] = fmt.Errorf("program %s: %w", par[i], errs[i])
					failed.Store(true)
				}
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			for _, p := range progs {
				if p != nil {
					p.Close()
				}
			}
			coll.Close()
			return nil, errs[i]
		}
	}
	if coll.Programs == nil {
		coll.Programs = map[string]*ebpf.Program{}
	}
	for i, name := range par {
		coll.Programs[name] = progs[i]
	}
	return coll, nil
}

// loadWithMaps loads a program whose map references name maps of maps.
func loadWithMaps(spec *ebpf.ProgramSpec, maps map[string]*ebpf.Map) (*ebpf.Program, error) {
	spec = spec.Copy()
	for i := range spec.Instructions {
		ins := &spec.Instructions[i]
		ref := ins.Reference()
		if ref == "" || !ins.IsLoadFromMap() {
			continue
		}
		m := maps[ref]
		if m == nil {
			return nil, fmt.Errorf("no map %s", ref)
		}
		if err := ins.AssociateMap(m); err != nil {
			return nil, fmt.Errorf("map %s: %w", ref, err)
		}
	}
	return ebpf.NewProgramWithOptions(spec, ebpf.ProgramOptions{})
}
