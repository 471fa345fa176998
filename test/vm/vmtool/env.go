package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"syscall"
)

// kernelEnv is what a case's conditions are decided on: the kernel the guest
// runs, as the guest sees it.
type kernelEnv struct {
	Label    string          // the -k spec run.sh booted: 6.12, 6.12-arm64, trixie/arm64
	Arch     string          // GOARCH: amd64, arm64
	Release  string          // uname -r
	Features map[string]bool // every name of features; one missing is unknown
	BTF      func(name string) bool
	// Traceable reports whether ftrace can trace a function (tracefs'
	// available_filter_functions).
	Traceable func(name string) bool
}

// String is the environment as one line, "VMENV label=... arch=... release=...
// features=a,b" (the features that hold, or -): runCases prints it first, and
// recheck reads it back from a log.
func (e *kernelEnv) String() string {
	var have []string
	for f, ok := range e.Features {
		if ok {
			have = append(have, f)
		}
	}
	sort.Strings(have)
	fs := strings.Join(have, ",")
	if fs == "" {
		fs = "-"
	}
	return fmt.Sprintf("VMENV label=%s arch=%s release=%s features=%s", e.Label, e.Arch, e.Release, fs)
}

// parseEnvLine reads String's line back; ok is false if line is not one. Its
// env knows every feature but no BTF names.
func parseEnvLine(line string) (*kernelEnv, bool) {
	f := strings.Fields(line)
	if len(f) != 5 || f[0] != "VMENV" {
		return nil, false
	}
	e := &kernelEnv{Features: map[string]bool{}}
	for name := range features {
		e.Features[name] = false
	}
	for _, kv := range f[1:] {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "label":
			e.Label = v
		case "arch":
			e.Arch = v
		case "release":
			e.Release = v
		case "features":
			for _, name := range strings.Split(v, ",") {
				if _, ok := features[name]; ok {
					e.Features[name] = true
				}
			}
		default:
			return nil, false
		}
	}
	return e, true
}

// guestEnv probes the running kernel. A BTF that cannot be read has no names
// (and so no kprobe-multi or drop reasons); the error says why.
func guestEnv(label string) (*kernelEnv, error) {
	var u syscall.Utsname
	syscall.Uname(&u)
	var rel []byte
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		rel = append(rel, byte(c))
	}
	kinds, err := readBTFNames("/sys/kernel/btf/vmlinux")
	_, kerr := os.Stat("/sys/bus/event_source/devices/kprobe")
	e := &kernelEnv{
		Label:     label,
		Arch:      runtime.GOARCH,
		Release:   string(rel),
		BTF:       func(name string) bool { return kinds[name]&btfDefined != 0 },
		Traceable: traceableFuncs(),
		Features: map[string]bool{
			// runtime's ProbeBackend tries a kprobe-multi link: the
			// kernel makes one where it has fprobe (CONFIG_FPROBE),
			// whose link is struct bpf_kprobe_multi_link.
			"kprobe-multi": kinds["bpf_kprobe_multi_link"]&(1<<btfStruct) != 0,
			"kprobes":      kerr == nil,
			"drop-reasons": kinds["skb_drop_reason"]&(1<<btfEnum|1<<btfEnum64) != 0,
		},
	}
	return e, err
}

// BTF kinds (include/uapi/linux/btf.h).
const (
	btfInt = iota + 1
	btfPtr
	btfArray
	btfStruct
	btfUnion
	btfEnum
	btfFwd
	btfTypedef
	btfVolatile
	btfConst
	btfRestrict
	btfFunc
	btfFuncProto
	btfVar
	btfDatasec
	btfFloat
	btfDeclTag
	btfTypeTag
	btfEnum64
)

// btfDefined are the kinds that btf:NAME finds: definitions with a name.
const btfDefined = 1<<btfInt | 1<<btfStruct | 1<<btfUnion | 1<<btfEnum | 1<<btfTypedef | 1<<btfFunc |
	1<<btfVar | 1<<btfFloat | 1<<btfEnum64

// readBTFNames reads a BTF blob (the kernel's /sys/kernel/btf/vmlinux) and
// returns each type name with the kinds (1<<kind) of the types of that name.
func readBTFNames(path string) (map[string]uint32, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseBTFNames(b)
}

func parseBTFNames(b []byte) (map[string]uint32, error) {
	le := binary.LittleEndian
	if len(b) < 24 || le.Uint16(b) != 0xeb9f {
		return nil, fmt.Errorf("not a little-endian BTF blob")
	}
	hdr := le.Uint32(b[4:])
	typeOff, typeLen := le.Uint32(b[8:]), le.Uint32(b[12:])
	strOff, strLen := le.Uint32(b[16:]), le.Uint32(b[20:])
	if uint64(hdr)+uint64(typeOff)+uint64(typeLen) > uint64(len(b)) || uint64(hdr)+uint64(strOff)+uint64(strLen) > uint64(len(b)) {
		return nil, fmt.Errorf("BTF sections past the end of the blob")
	}
	types := b[hdr+typeOff : hdr+typeOff+typeLen]
	strs := b[hdr+strOff : hdr+strOff+strLen]
	name := func(off uint32) string {
		if off == 0 || off >= uint32(len(strs)) {
			return ""
		}
		s := strs[off:]
		for i, c := range s {
			if c == 0 {
				return string(s[:i])
			}
		}
		return ""
	}
	kinds := map[string]uint32{}
	for p := 0; p < len(types); {
		if p+12 > len(types) {
			return nil, fmt.Errorf("BTF type at %d cut short", p)
		}
		nameOff, info := le.Uint32(types[p:]), le.Uint32(types[p+4:])
		kind, vlen := int(info>>24&0x1f), int(info&0xffff)
		p += 12
		switch kind {
		case btfInt, btfVar, btfDeclTag:
			p += 4
		case btfArray:
			p += 12
		case btfStruct, btfUnion, btfDatasec, btfEnum64:
			p += 12 * vlen
		case btfEnum, btfFuncProto:
			p += 8 * vlen
		case btfPtr, btfFwd, btfTypedef, btfVolatile, btfConst, btfRestrict, btfFunc, btfFloat, btfTypeTag:
		default:
			return nil, fmt.Errorf("BTF kind %d unknown (at %d)", kind, p-12)
		}
		if n := name(nameOff); n != "" {
			kinds[n] |= 1 << kind
		}
	}
	return kinds, nil
}
