package session

import (
	"errors"
	"reflect"
	"unsafe"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// batchElems is how many elements one batch lookup asks the kernel for at
// first; a hash bucket that holds more doubles it.
const batchElems = 256

// walkMap calls fn with each element of a hash map: its key and its
// value, one per CPU for a per-CPU map. The slices are valid only during
// the call. It reads the map in batches (BPF_MAP_LOOKUP_BATCH, Linux 5.6),
// one system call per batch, or element by element where the kernel has
// no batch operations.
func walkMap(m *ebpf.Map, fn func(key []byte, perCPU [][]byte)) error {
	err := walkBatch(m, fn)
	if errors.Is(err, ebpf.ErrNotSupported) {
		return walkIter(m, fn)
	}
	return err
}

// walkBatch is walkMap with batch lookups; it returns ErrNotSupported
// before calling fn where the kernel has none.
func walkBatch(m *ebpf.Map, fn func(key []byte, perCPU [][]byte)) error {
	ks, vs := int(m.KeySize()), int(m.ValueSize())
	cpus := 1
	if perCPUHash(m.Type()) {
		n, err := ebpf.PossibleCPU()
		if err != nil {
			return err
		}
		cpus = n
	}
	many := make([][]byte, cpus)
	var cursor ebpf.MapBatchCursor
	var keys, values reflect.Value
	var kb, vb []byte
	for n := batchElems; ; {
		if !keys.IsValid() || keys.Len() != n {
			// Slices of arrays, which cilium/ebpf counts by element and
			// the kernel writes into directly (no copy).
			keys = reflect.MakeSlice(reflect.SliceOf(reflect.ArrayOf(ks, byteType)), n, n)
			values = reflect.MakeSlice(reflect.SliceOf(reflect.ArrayOf(vs, byteType)), n*cpus, n*cpus)
			kb = unsafe.Slice((*byte)(keys.UnsafePointer()), n*ks)
			vb = unsafe.Slice((*byte)(values.UnsafePointer()), n*cpus*vs)
		}
		got, err := m.BatchLookup(&cursor, keys.Interface(), values.Interface(), nil)
		if errors.Is(err, unix.ENOSPC) && got == 0 {
			// One hash bucket holds more elements than a batch.
			n *= 2
			continue
		}
		if err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
			return err
		}
		for i := 0; i < got; i++ {
			for c := range many {
				many[c] = vb[(i*cpus+c)*vs:][:vs]
			}
			fn(kb[i*ks:][:ks], many)
		}
		if err != nil { // ErrKeyNotExist: the last batch
			return nil
		}
	}
}

var byteType = reflect.TypeFor[byte]()

// walkIter is walkMap element by element: a system call for each key and
// for each value.
func walkIter(m *ebpf.Map, fn func(key []byte, perCPU [][]byte)) error {
	key := make([]byte, m.KeySize())
	perCPU := perCPUHash(m.Type())
	var one []byte
	var many [][]byte
	it := m.Iterate()
	for {
		var ok bool
		if perCPU {
			ok = it.Next(&key, &many)
		} else {
			ok = it.Next(&key, &one)
			many = [][]byte{one}
		}
		if !ok {
			break
		}
		fn(key, many)
	}
	return it.Err()
}

// perCPUHash reports whether a hash holds a value per CPU: an
// aggregation's, LRU (let @m = lruhash(N)) or not.
func perCPUHash(t ebpf.MapType) bool { return t == ebpf.PerCPUHash || t == ebpf.LRUCPUHash }
