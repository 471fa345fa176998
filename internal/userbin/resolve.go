// Package userbin finds the binaries and functions that uprobes name, as
// bpftrace does: a library by its name (libc) in the dynamic linker's
// cache, a command in PATH, and functions in an ELF file's symbol tables.
package userbin

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// LdCache is the dynamic linker's cache that library names are looked up in.
const LdCache = "/etc/ld.so.cache"

// libDirs are the directories searched for a library the cache does not
// list, after the multiarch directory of the architecture (libbpf's
// fallback).
var libDirs = []string{"/lib64", "/usr/lib64", "/lib", "/usr/lib"}

// multiarch are Debian's multiarch directory names by GOARCH.
var multiarch = map[string]string{"amd64": "x86_64-linux-gnu", "arm64": "aarch64-linux-gnu"}

// Resolve finds the file a uprobe's binary names, for a kernel of
// architecture arch (a GOARCH). A name with a slash is a path. A name that
// starts with lib is a library (libc, libssl): the first of this
// architecture whose soname is libNAME.so... in the ld.so cache, else in the
// standard library directories. Otherwise, or where no library is found, it
// is the file itself or a command in PATH: an executable ELF file or a
// shared object. The error says what was looked for where.
func Resolve(name, arch string) (string, error) {
	if strings.Contains(name, "/") {
		if err := usable(name, arch); err != nil {
			return "", err
		}
		return name, nil
	}
	var searched []string
	if lib, ok := strings.CutPrefix(name, "lib"); ok && lib != "" {
		if p := findLibrary(lib, arch); p != "" {
			return p, nil
		}
		searched = append(searched, "the ld.so cache ("+LdCache+")", strings.Join(libSearchDirs(arch), ", "))
	}
	candidates := []string{name}
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if dir != "" {
			candidates = append(candidates, filepath.Join(dir, name))
		}
	}
	for _, c := range candidates {
		if usable(c, arch) == nil {
			return c, nil
		}
	}
	searched = append(searched, "PATH")
	return "", fmt.Errorf("no library or executable %s in %s", name, strings.Join(searched, ", "))
}

// findLibrary looks for libNAME.so... in the ld.so cache, then in the
// library directories.
func findLibrary(lib, arch string) string {
	if entries, err := readLdCache(LdCache); err == nil {
		if p := whichSO(entries, lib, arch); p != "" && usable(p, arch) == nil {
			return p
		}
	}
	prefix := "lib" + lib + ".so"
	for _, dir := range libSearchDirs(arch) {
		files, _ := filepath.Glob(filepath.Join(dir, prefix+"*"))
		slices.Sort(files)
		for _, f := range files {
			if usable(f, arch) == nil {
				return f
			}
		}
	}
	return ""
}

func libSearchDirs(arch string) []string {
	var dirs []string
	if m := multiarch[arch]; m != "" {
		dirs = append(dirs, "/lib/"+m, "/usr/lib/"+m)
	}
	return append(dirs, libDirs...)
}

// machines are the ELF machines of the architectures skbtrace runs on.
var machines = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}

// usable checks that a file is an ELF executable (with the execute
// permission) or a shared object, for architecture arch.
func usable(path, arch string) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if st.IsDir() {
		return fmt.Errorf("%s is a directory", path)
	}
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("%s is not an ELF executable or shared library", path)
	}
	defer f.Close()
	switch {
	case f.Type == elf.ET_EXEC && st.Mode()&0o111 == 0:
		return fmt.Errorf("%s is not executable", path)
	case f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN:
		return fmt.Errorf("%s is an ELF %s, not an executable or shared library", path, f.Type)
	case machines[arch] != 0 && f.Machine != machines[arch]:
		return fmt.Errorf("%s is for %s, and the kernel runs %s code", path, f.Machine, arch)
	}
	return nil
}
