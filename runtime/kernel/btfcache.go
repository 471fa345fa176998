package kernel

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/cilium/ebpf/btf"
	"golang.org/x/sys/unix"
)

// btfCacheVersion changes whenever the BTF cache's content or meaning does.
const btfCacheVersion = "skbtrace-btf-2"

// The cache stays small, or reading it would cost what it saves: a
// one-liner's types (sk_buff's graph) take 430 KB and a few names, but a
// script that globs functions looks up hundreds. Past either bound a run's
// names replace the cache's instead of joining them; a run whose names alone
// pass it leaves the cache as it is.
const (
	btfCacheMaxBytes = 2 << 20
	btfCacheMaxNames = 512
)

// kernelNotes holds the kernel's ELF notes, among them its GNU build ID.
const kernelNotes = "/sys/kernel/notes"

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// kernelBTFKey identifies the running kernel's BTF without reading it (5 MB):
// the kernel's build ID, a hash over the vmlinux image that holds the BTF,
// with the release, version and BTF size. A kernel without a build ID has
// no key, and no cache.
func kernelBTFKey() (string, error) {
	notes, err := os.ReadFile(kernelNotes)
	if err != nil {
		return "", err
	}
	id, ok := gnuBuildID(notes)
	if !ok {
		return "", fmt.Errorf("%s has no GNU build ID", kernelNotes)
	}
	st, err := os.Stat(filepath.Join(btfDir, "vmlinux"))
	if err != nil {
		return "", err
	}
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n%x\n%d\n", btfCacheVersion, unix.ByteSliceToString(u.Release[:]), unix.ByteSliceToString(u.Version[:]), id, st.Size())
	return hex.EncodeToString(h.Sum(nil))[:32], nil
}

// gnuBuildID finds the NT_GNU_BUILD_ID note among ELF notes: each a
// namesz, descsz and type, then the name and the descriptor, 4-aligned.
func gnuBuildID(notes []byte) ([]byte, bool) {
	const ntGNUBuildID = 3
	align := func(n uint32) int { return int((n + 3) &^ 3) }
	for len(notes) >= 12 {
		namesz := binary.NativeEndian.Uint32(notes[0:])
		descsz := binary.NativeEndian.Uint32(notes[4:])
		typ := binary.NativeEndian.Uint32(notes[8:])
		notes = notes[12:]
		if align(namesz) > len(notes) || align(namesz)+align(descsz) > len(notes) {
			return nil, false
		}
		name, desc := notes[:namesz], notes[align(namesz):align(namesz)+int(descsz)]
		notes = notes[align(namesz)+align(descsz):]
		if typ == ntGNUBuildID && string(name) == "GNU\x00" && len(desc) > 0 {
			return desc, true
		}
	}
	return nil, false
}

// btfCachePath is where the BTF cache of a kernel is kept.
func btfCachePath(key string) (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "skbtrace", "btf-"+key), nil
}

// LoadCachedTypes returns this kernel's BTF cache, or an error where there
// is none (yet), it is stale or unreadable, or the kernel has no build ID.
func LoadCachedTypes() (*CachedTypes, error) {
	key, err := kernelBTFKey()
	if err != nil {
		return nil, err
	}
	file, err := btfCachePath(key)
	if err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return decodeBTFCache(raw)
}

// The cache file:
//
//	skbtrace-btf-1 CRC NAMES BYTES
//	"name" [found] ID:KID...  (NAMES lines; "found" where the name exists;
//	                           each type's ID here and in the kernel's BTF)
//	BTF                        (BYTES bytes: the types, marshalled)
//
// CRC is the CRC-32C of everything after the first line.
func decodeBTFCache(raw []byte) (*CachedTypes, error) {
	head, rest, ok := bytes.Cut(raw, []byte("\n"))
	if !ok {
		return nil, fmt.Errorf("BTF cache: no header")
	}
	f := strings.Fields(string(head))
	if len(f) != 4 || f[0] != btfCacheVersion {
		return nil, fmt.Errorf("BTF cache: stale")
	}
	crc, err1 := strconv.ParseUint(f[1], 16, 32)
	nnames, err2 := strconv.Atoi(f[2])
	nbytes, err3 := strconv.Atoi(f[3])
	if err := errors.Join(err1, err2, err3); err != nil {
		return nil, fmt.Errorf("BTF cache header: %w", err)
	}
	var err error
	if crc32.Checksum(rest, crcTable) != uint32(crc) {
		return nil, fmt.Errorf("BTF cache: corrupt")
	}
	if nbytes > len(rest) {
		return nil, fmt.Errorf("BTF cache: truncated")
	}
	table, blob := rest[:len(rest)-nbytes], rest[len(rest)-nbytes:]
	c := &CachedTypes{names: make(map[string]cachedName, nnames)}
	sc := bufio.NewScanner(bytes.NewReader(table))
	for sc.Scan() {
		name, ids, err := parseCachedName(sc.Text())
		if err != nil {
			return nil, err
		}
		c.names[name] = ids
	}
	if len(c.names) != nnames {
		return nil, fmt.Errorf("BTF cache: %d names, want %d", len(c.names), nnames)
	}
	if c.spec, err = btf.LoadSpecFromReader(bytes.NewReader(blob)); err != nil {
		return nil, fmt.Errorf("BTF cache: %w", err)
	}
	return c, nil
}

func parseCachedName(line string) (string, cachedName, error) {
	name, err := strconv.QuotedPrefix(line)
	if err == nil {
		name, err = strconv.Unquote(name)
	}
	if err != nil {
		return "", cachedName{}, fmt.Errorf("BTF cache: bad line %q", line)
	}
	var n cachedName
	for i, f := range strings.Fields(line[len(strconv.Quote(name)):]) {
		if i == 0 && f == "found" {
			n.found = true
			continue
		}
		a, b, _ := strings.Cut(f, ":")
		id, err1 := strconv.ParseUint(a, 10, 32)
		kid, err2 := strconv.ParseUint(b, 10, 32)
		if err1 != nil || err2 != nil || id == 0 || kid == 0 {
			return "", cachedName{}, fmt.Errorf("BTF cache: bad line %q", line)
		}
		n.ids = append(n.ids, btf.TypeID(id))
		n.kernelIDs = append(n.kernelIDs, btf.TypeID(kid))
	}
	return name, n, nil
}

// encodeBTFCache marshals what spec answers for each name.
func encodeBTFCache(spec *btf.Spec, names []string) ([]byte, error) {
	slices.Sort(names)
	names = slices.Compact(names)
	b, err := btf.NewBuilder(nil, nil)
	if err != nil {
		return nil, err
	}
	var table bytes.Buffer
	n := 0
	for _, name := range names {
		types, err := spec.AnyTypesByName(name)
		found := err == nil
		if err != nil && !errors.Is(err, btf.ErrNotFound) {
			continue // not cached: asked again, it misses
		}
		fmt.Fprintf(&table, "%s", strconv.Quote(name))
		if found {
			table.WriteString(" found")
		}
		for _, t := range types {
			id, err := b.Add(t)
			if err != nil {
				return nil, err
			}
			kid, err := spec.TypeID(t)
			if err != nil {
				return nil, err
			}
			fmt.Fprintf(&table, " %d:%d", id, kid)
		}
		table.WriteByte('\n')
		n++
	}
	blob, err := b.Marshal(nil, nil)
	if err != nil {
		return nil, err
	}
	rest := append(table.Bytes(), blob...)
	var out bytes.Buffer
	fmt.Fprintf(&out, "%s %08x %d %d\n", btfCacheVersion, crc32.Checksum(rest, crcTable), n, len(blob))
	out.Write(rest)
	return out.Bytes(), nil
}

// SaveTypes adds the names looked up through r to this kernel's BTF cache
// (prev, where it was read: nil otherwise), unless it holds them already.
// A cache that cannot be written only costs time.
func SaveTypes(r *RecordingTypes, prev *CachedTypes) error {
	own := r.looked()
	if len(own) > btfCacheMaxNames {
		return nil
	}
	names := own
	if prev != nil {
		fresh := slices.DeleteFunc(slices.Clone(own), func(n string) bool { _, ok := prev.names[n]; return ok })
		if len(fresh) == 0 {
			return nil
		}
		if len(prev.names)+len(fresh) <= btfCacheMaxNames {
			names = append(fresh, slices.Collect(maps.Keys(prev.names))...)
		}
	}
	key, err := kernelBTFKey()
	if err != nil {
		return err
	}
	file, err := btfCachePath(key)
	if err != nil {
		return err
	}
	raw, err := encodeBTFCache(r.spec, names)
	if err == nil && len(raw) > btfCacheMaxBytes && len(names) > len(own) {
		raw, err = encodeBTFCache(r.spec, own)
	}
	if err != nil || len(raw) > btfCacheMaxBytes {
		return err
	}
	return writeFileAtomic(file, raw)
}

// writeFileAtomic writes a file whole, through a temporary file renamed
// over it: a reader sees the old or the new, never a part.
func writeFileAtomic(file string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(file), filepath.Base(file)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	err = f.Chmod(0o644)
	if err == nil {
		_, err = io.Copy(f, bytes.NewReader(data))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(f.Name(), file)
}
