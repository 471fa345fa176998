package kernel

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/skbtrace/skbtrace/lang/types"
)

// cacheVersion changes whenever the cache's content or meaning does.
const cacheVersion = "skbtrace-skbfuncs-4"

// kernelBuildKey identifies what discovery depends on: the kernel's build
// (release and version strings) and the BTF blobs loaded (modules come and
// go), so that a cached result is never used for another kernel.
func kernelBuildKey(vmlinuxPath string) (string, error) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n%s\n", cacheVersion, unix.ByteSliceToString(u.Release[:]), unix.ByteSliceToString(u.Version[:]), vmlinuxPath)
	if vmlinuxPath != "" {
		st, err := os.Stat(vmlinuxPath)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%d %d\n", st.Size(), st.ModTime().UnixNano())
	} else {
		ents, err := os.ReadDir(btfDir)
		if err != nil {
			return "", err
		}
		for _, e := range ents {
			info, err := e.Info()
			if err != nil {
				return "", err
			}
			fmt.Fprintf(h, "%s %d\n", e.Name(), info.Size())
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:32], nil
}

// cachePath is where discovery's result for a kernel build is kept.
func cachePath(key string) (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "skbtrace", "skbfuncs-"+key), nil
}

// CachedDiscovery returns discovery's result for this kernel build from the
// cache, or discovers and stores it. fromCache says which happened. A cache
// that cannot be read or written only costs time.
func CachedDiscovery(vmlinuxPath string) (d *Discovery, fromCache bool, err error) {
	key, kerr := kernelBuildKey(vmlinuxPath)
	var file string
	if kerr == nil {
		file, kerr = cachePath(key)
	}
	if kerr == nil {
		if d, err := readCache(file); err == nil {
			return d, true, nil
		}
	}
	d, err = DiscoverSkbFuncs(vmlinuxPath)
	if err != nil {
		return nil, false, err
	}
	if kerr == nil {
		writeCache(file, d)
	}
	return d, false, nil
}

// The cache file: a header line ("version untraceable trampolineops
// source"), then "name skbarg reasonarg proto module nargs ret" lines.
func writeCache(file string, d *Discovery) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %d %t %s\n", cacheVersion, d.Untraceable, d.TrampolineOps, d.Source)
	for _, f := range d.Funcs {
		mod := f.Module
		if mod == "" {
			mod = "-"
		}
		fmt.Fprintf(&b, "%s %d %d %d %s %d %s\n", f.Name, f.SkbArg, f.ReasonArg, f.Proto, mod, f.NArgs, f.Ret)
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return
	}
	tmp := file + ".tmp" + strconv.Itoa(os.Getpid())
	if os.WriteFile(tmp, b.Bytes(), 0o644) == nil {
		os.Rename(tmp, file)
	}
	os.Remove(tmp)
}

func readCache(file string) (*Discovery, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	if !sc.Scan() {
		return nil, fmt.Errorf("empty cache")
	}
	head := strings.Fields(sc.Text())
	if len(head) != 4 || head[0] != cacheVersion {
		return nil, fmt.Errorf("stale cache")
	}
	d := &Discovery{Source: head[3]}
	if d.Untraceable, err = strconv.Atoi(head[1]); err != nil {
		return nil, err
	}
	if d.TrampolineOps, err = strconv.ParseBool(head[2]); err != nil {
		return nil, err
	}
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 7 {
			return nil, fmt.Errorf("bad cache line %q", sc.Text())
		}
		arg, err1 := strconv.Atoi(f[1])
		reason, err2 := strconv.Atoi(f[2])
		proto, err3 := strconv.ParseUint(f[3], 10, 32)
		nargs, err4 := strconv.Atoi(f[5])
		ret, ok := types.ParseRetClass(f[6])
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil || !ok {
			return nil, fmt.Errorf("bad cache line %q", sc.Text())
		}
		mod := f[4]
		if mod == "-" {
			mod = ""
		}
		d.Funcs = append(d.Funcs, SkbFunc{Name: f[0], SkbArg: arg, ReasonArg: reason, Proto: uint32(proto), Module: mod, NArgs: nargs, Ret: ret})
	}
	if len(d.Funcs) == 0 {
		return nil, fmt.Errorf("empty cache")
	}
	return d, nil
}
