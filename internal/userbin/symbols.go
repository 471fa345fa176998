package userbin

import (
	"debug/elf"
	"errors"
	"fmt"
	"path"
	"slices"
	"sync"
)

// Func is a function of a binary, from its symbol tables.
type Func struct {
	Name string
	// Addr is the symbol's value (the address the binary is linked at),
	// Size its size; Offset is where its code is in the file, which a
	// uprobe is placed by.
	Addr, Size, Offset uint64
	// IFunc says the symbol is an indirect function (STT_GNU_IFUNC): its
	// code is a resolver, run once when the binary is loaded, that picks
	// the function's implementation.
	IFunc bool
}

// Binary is the functions of an ELF file, by name.
type Binary struct {
	Path  string
	funcs map[string]Func
	// sorted are the functions in name order.
	sorted []Func
}

var (
	cacheMu sync.Mutex
	cache   = map[string]*Binary{}
)

// Open reads the functions of an ELF file's symbol tables (.symtab and
// .dynsym): defined functions whose code is in an executable segment. A
// file is read once per process.
func Open(file string) (*Binary, error) {
	cacheMu.Lock()
	defer cacheMu.Unlock()
	if b, ok := cache[file]; ok {
		return b, nil
	}
	f, err := elf.Open(file)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return nil, fmt.Errorf("read the symbols of %s: %w", file, err)
	}
	dyn, err := f.DynamicSymbols()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return nil, fmt.Errorf("read the dynamic symbols of %s: %w", file, err)
	}
	b := &Binary{Path: file, funcs: map[string]Func{}}
	for _, s := range append(syms, dyn...) {
		typ := elf.ST_TYPE(s.Info)
		if typ != elf.STT_FUNC && typ != elf.STT_GNU_IFUNC || s.Section == elf.SHN_UNDEF || s.Value == 0 || s.Name == "" {
			continue
		}
		if _, ok := b.funcs[s.Name]; ok {
			continue
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 && p.Vaddr <= s.Value && s.Value < p.Vaddr+p.Memsz {
				b.funcs[s.Name] = Func{Name: s.Name, Addr: s.Value, Size: s.Size, Offset: s.Value - p.Vaddr + p.Off, IFunc: typ == elf.STT_GNU_IFUNC}
				break
			}
		}
	}
	for _, fn := range b.funcs {
		b.sorted = append(b.sorted, fn)
	}
	slices.SortFunc(b.sorted, func(x, y Func) int {
		if x.Name < y.Name {
			return -1
		}
		if x.Name > y.Name {
			return 1
		}
		return 0
	})
	cache[file] = b
	return b, nil
}

// Lookup finds a function by name.
func (b *Binary) Lookup(name string) (Func, bool) {
	fn, ok := b.funcs[name]
	return fn, ok
}

// Match lists the functions whose names match a glob, in name order,
// without indirect functions and, of functions at one address (aliases
// such as gethostbyname and __gethostbyname), only the first by name.
func (b *Binary) Match(glob string) ([]Func, error) {
	if _, err := path.Match(glob, ""); err != nil {
		return nil, err
	}
	var out []Func
	seen := map[uint64]bool{}
	for _, fn := range b.sorted {
		if ok, _ := path.Match(glob, fn.Name); !ok || fn.IFunc || seen[fn.Addr] {
			continue
		}
		seen[fn.Addr] = true
		out = append(out, fn)
	}
	return out, nil
}

// At finds the function whose code holds an address (a symbol value).
func (b *Binary) At(addr uint64) (Func, bool) {
	for _, fn := range b.sorted {
		if fn.Addr <= addr && (addr < fn.Addr+fn.Size || addr == fn.Addr) {
			return fn, true
		}
	}
	return Func{}, false
}

// Names lists every function's name, for suggestions.
func (b *Binary) Names() []string {
	names := make([]string, len(b.sorted))
	for i, fn := range b.sorted {
		names[i] = fn.Name
	}
	return names
}

// AtOffset finds the function whose code holds a file offset (where a
// process's mapping of the file puts an address).
func (b *Binary) AtOffset(off uint64) (Func, bool) {
	for _, fn := range b.sorted {
		if fn.Offset <= off && off < fn.Offset+max(fn.Size, 1) && !fn.IFunc {
			return fn, true
		}
	}
	return Func{}, false
}
