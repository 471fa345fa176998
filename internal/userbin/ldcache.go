package userbin

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"strings"
)

// The dynamic linker's cache (/etc/ld.so.cache, written by ldconfig): the
// libraries of the standard directories and of ld.so.conf, by soname. Its
// current format ("glibc-ld.so.cache1.1") may follow the old one
// ("ld.so-1.7.0"); string offsets are from the start of the new header.

const (
	ldCacheOldMagic = "ld.so-1.7.0\x00"
	ldCacheNewMagic = "glibc-ld.so.cache1.1"
	// ldCacheNewHeader is struct cache_file_new up to its entries: magic
	// and version, nlibs, len_strings, flags, padding, extension offset,
	// three unused words.
	ldCacheNewHeader = 48
	ldCacheNewEntry  = 24 // flags, key, value, osversion, hwcap
	ldCacheOldEntry  = 12 // flags, key, value
)

// ldCacheEntry is one library of the cache.
type ldCacheEntry struct {
	soname, path string
	flags        int32
}

// The flags glibc's ldconfig gives a library: its kind in the low byte,
// its ABI in the next (sysdeps/generic/ldconfig.h).
const (
	ldFlagTypeMask  = 0x00ff
	ldFlagELFLibc6  = 0x0003
	ldFlagABIMask   = 0xff00
	ldFlagX8664     = 0x0300
	ldFlagAArch64   = 0x0a00
	ldFlagNoABIFlag = 0x0000
)

// ldCacheABI is the ABI flag of a GOARCH's libraries.
func ldCacheABI(arch string) int32 {
	switch arch {
	case "amd64":
		return ldFlagX8664
	case "arm64":
		return ldFlagAArch64
	}
	return ldFlagNoABIFlag
}

// readLdCache reads the cache's entries in its order.
func readLdCache(path string) ([]ldCacheEntry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseLdCache(data)
}

var errLdCacheFormat = errors.New("not a glibc ld.so.cache")

func parseLdCache(data []byte) ([]ldCacheEntry, error) {
	start := 0
	if bytes.HasPrefix(data, []byte(ldCacheOldMagic)) {
		if len(data) < len(ldCacheOldMagic)+4 {
			return nil, errLdCacheFormat
		}
		n := int(binary.LittleEndian.Uint32(data[len(ldCacheOldMagic):]))
		start = len(ldCacheOldMagic) + 4 + n*ldCacheOldEntry
		start = (start + 7) &^ 7
	}
	if start > len(data) || !bytes.HasPrefix(data[start:], []byte(ldCacheNewMagic)) {
		return nil, errLdCacheFormat
	}
	cache := data[start:]
	if len(cache) < ldCacheNewHeader {
		return nil, errLdCacheFormat
	}
	n := int(binary.LittleEndian.Uint32(cache[20:]))
	if n < 0 || ldCacheNewHeader+n*ldCacheNewEntry > len(cache) {
		return nil, errLdCacheFormat
	}
	str := func(off uint32) string {
		if int(off) >= len(cache) {
			return ""
		}
		s := cache[off:]
		if i := bytes.IndexByte(s, 0); i >= 0 {
			s = s[:i]
		}
		return string(s)
	}
	entries := make([]ldCacheEntry, 0, n)
	for i := range n {
		e := cache[ldCacheNewHeader+i*ldCacheNewEntry:]
		entries = append(entries, ldCacheEntry{
			flags:  int32(binary.LittleEndian.Uint32(e)),
			soname: str(binary.LittleEndian.Uint32(e[4:])),
			path:   str(binary.LittleEndian.Uint32(e[8:])),
		})
	}
	return entries, nil
}

// whichSO finds library lib (the name after "lib": "c" for libc) in the
// cache as bcc's bcc_procutils_which_so does, which bpftrace uses: the
// first ELF libc6 library of this ABI whose soname starts with libNAME.so.
func whichSO(entries []ldCacheEntry, name, arch string) string {
	prefix := "lib" + name + ".so"
	for _, e := range entries {
		if strings.HasPrefix(e.soname, prefix) && e.flags&ldFlagTypeMask == ldFlagELFLibc6 && e.flags&ldFlagABIMask == ldCacheABI(arch) {
			return e.path
		}
	}
	return ""
}
