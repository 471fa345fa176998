package userbin

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
)

// ldCacheFile builds an ld.so.cache in the current format, after the old
// one where old is set, of the given entries.
func ldCacheFile(old bool, entries []ldCacheEntry) []byte {
	var b bytes.Buffer
	le := binary.LittleEndian
	if old {
		b.WriteString(ldCacheOldMagic)
		binary.Write(&b, le, uint32(1))
		binary.Write(&b, le, [3]uint32{1, 0, 0}) // one old entry, ignored
		for b.Len()%8 != 0 {
			b.WriteByte(0)
		}
	}
	var hdr bytes.Buffer
	hdr.WriteString(ldCacheNewMagic)
	binary.Write(&hdr, le, uint32(len(entries)))
	binary.Write(&hdr, le, uint32(0))
	hdr.Write(make([]byte, ldCacheNewHeader-hdr.Len()))
	strs := ldCacheNewHeader + len(entries)*ldCacheNewEntry
	var table bytes.Buffer
	var ents bytes.Buffer
	for _, e := range entries {
		key := strs + table.Len()
		table.WriteString(e.soname + "\x00")
		val := strs + table.Len()
		table.WriteString(e.path + "\x00")
		binary.Write(&ents, le, e.flags)
		binary.Write(&ents, le, uint32(key))
		binary.Write(&ents, le, uint32(val))
		binary.Write(&ents, le, uint32(0))
		binary.Write(&ents, le, uint64(0))
	}
	b.Write(hdr.Bytes())
	b.Write(ents.Bytes())
	b.Write(table.Bytes())
	return b.Bytes()
}

func TestLdCache(t *testing.T) {
	lib := ldFlagELFLibc6 | ldFlagX8664
	entries := []ldCacheEntry{
		{soname: "libssl3.so", path: "/lib/libssl3.so", flags: int32(lib)},
		{soname: "libssl.so.3", path: "/lib32/libssl.so.3", flags: ldFlagELFLibc6}, // 32-bit
		{soname: "libssl.so.3", path: "/lib/libssl.so.3", flags: int32(lib)},
		{soname: "libc.so.6", path: "/lib/libc.so.6", flags: int32(lib)},
	}
	for _, old := range []bool{false, true} {
		got, err := parseLdCache(ldCacheFile(old, entries))
		if err != nil {
			t.Fatalf("old=%v: %v", old, err)
		}
		if len(got) != len(entries) || got[2] != entries[2] {
			t.Fatalf("old=%v: read %+v, want %+v", old, got, entries)
		}
		for name, want := range map[string]string{"ssl": "/lib/libssl.so.3", "c": "/lib/libc.so.6", "crypto": ""} {
			if p := whichSO(got, name, "amd64"); p != want {
				t.Errorf("lib%s: %q, want %q", name, p, want)
			}
		}
	}
	if _, err := parseLdCache([]byte("not a cache")); err == nil {
		t.Error("read a file that is not a cache")
	}
}

func TestResolve(t *testing.T) {
	arch := goruntime.GOARCH
	libc, err := Resolve("libc", arch)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(filepath.Base(libc), "libc.so") {
		t.Errorf("libc is %s", libc)
	}
	if p, err := Resolve("/bin/sh", arch); err != nil || p != "/bin/sh" {
		t.Errorf("/bin/sh: %q, %v", p, err)
	}
	t.Setenv("PATH", "/nonexistent:/usr/bin:/bin")
	if p, err := Resolve("sh", arch); err != nil || p != "/usr/bin/sh" && p != "/bin/sh" {
		t.Errorf("sh: %q, %v", p, err)
	}
	for name, want := range map[string]string{
		"libskbtracenosuch": "no library or executable libskbtracenosuch in the ld.so cache (/etc/ld.so.cache), ",
		"skbtracenosuch":    "no library or executable skbtracenosuch in PATH",
		"/etc/passwd":       "/etc/passwd is not an ELF executable or shared library",
		"/nonexistent/x":    "/nonexistent/x: stat /nonexistent/x: no such file or directory",
	} {
		_, err := Resolve(name, arch)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: %v, want %q...", name, err, want)
		}
	}
	other := map[string]string{"amd64": "arm64", "arm64": "amd64"}[arch]
	if _, err := Resolve("/bin/sh", other); err == nil || !strings.Contains(err.Error(), "the kernel runs "+other+" code") {
		t.Errorf("another architecture's binary: %v", err)
	}
}

// TestSymbols reads bash's functions: it exports its own (readline
// among them, as bpftrace's bashreadline.bt expects).
func TestSymbols(t *testing.T) {
	b, err := Open("/bin/bash")
	if err != nil {
		t.Skipf("no bash to read: %v", err)
	}
	fn, ok := b.Lookup("legal_number")
	if !ok || fn.Size == 0 || fn.Offset == 0 || fn.IFunc {
		t.Fatalf("legal_number: %+v, %v", fn, ok)
	}
	if _, ok := b.Lookup("readline"); !ok {
		t.Error("no readline")
	}
	if at, ok := b.At(fn.Addr + fn.Size/2); !ok || at.Name != fn.Name {
		t.Errorf("the function inside legal_number is %+v", at)
	}
	fns, err := b.Match("legal_num*")
	if err != nil || len(fns) != 1 || fns[0] != fn {
		t.Errorf("legal_num* matches %+v (%v)", fns, err)
	}
	if _, err := b.Match("["); err == nil {
		t.Error("a bad pattern matched")
	}
	if again, _ := Open("/bin/bash"); again != b {
		t.Error("read twice")
	}
}

// TestLibcSymbols checks aliases and indirect functions in the C library.
func TestLibcSymbols(t *testing.T) {
	libc, err := Resolve("libc", goruntime.GOARCH)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Open(libc)
	if err != nil {
		t.Fatal(err)
	}
	if fn, ok := b.Lookup("getaddrinfo"); !ok || fn.IFunc {
		t.Errorf("getaddrinfo: %+v %v", fn, ok)
	}
	if fn, ok := b.Lookup("strlen"); !ok || !fn.IFunc {
		t.Errorf("strlen is not an indirect function: %+v %v", fn, ok)
	}
	fns, _ := b.Match("strle?")
	if len(fns) != 0 {
		t.Errorf("a glob matched an indirect function: %+v", fns)
	}
	// pthread_create has two versions in glibc 2.34 and later, one address.
	fns, _ = b.Match("pthread_create*")
	if len(fns) != 1 || fns[0].Name != "pthread_create" {
		t.Errorf("pthread_create* matches %+v", fns)
	}
}

// TestSymbolize names a function of a running bash by the address its
// mapping of /bin/bash gives it.
func TestSymbolize(t *testing.T) {
	b, err := Open("/bin/bash")
	if err != nil {
		t.Skipf("no bash to read: %v", err)
	}
	fn, _ := b.Lookup("legal_number")
	cmd := exec.Command("/bin/bash", "-c", "read x")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	pid := uint32(cmd.Process.Pid)
	// Where the process mapped the page of the file that holds the
	// function: the address the function runs at. Start returns once the
	// process has run execve, which mapped the binary.
	addr := mappedAddr(t, pid, fn.Offset)
	if addr == 0 {
		t.Fatal("bash's code is not mapped")
	}
	for _, a := range []uint64{addr, addr + fn.Size - 1} {
		if name, ok := Symbolize(pid, a); !ok || name != "legal_number" {
			t.Errorf("%#x is %q, %v", a, name, ok)
		}
	}
	if name, ok := Symbolize(pid, 8); ok {
		t.Errorf("address 8 is %q", name)
	}
	// After the process has ended, as a map printed at exit asks.
	stdin.Close()
	cmd.Wait()
	if name, ok := Symbolize(pid, addr); !ok || name != "legal_number" {
		t.Errorf("after the end, %#x is %q, %v", addr, name, ok)
	}
	if name, ok := Symbolize(pid, addr+1); ok {
		t.Errorf("after the end, an address not seen before is %q", name)
	}
}

// mappedAddr is the address a process's mapping of /bin/bash (or
// /usr/bin/bash) gives a file offset, 0 where none covers it.
func mappedAddr(t *testing.T, pid uint32, off uint64) uint64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		var start, end, foff uint64
		var perms, dev, path string
		var inode int
		if n, _ := fmt.Sscanf(l, "%x-%x %s %x %s %d %s", &start, &end, &perms, &foff, &dev, &inode, &path); n < 7 || !strings.HasSuffix(path, "bin/bash") {
			continue
		}
		if foff <= off && off < foff+end-start {
			return start + off - foff
		}
	}
	return 0
}
