package kernel

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// btfDir holds vmlinux's BTF and each loaded module's.
const btfDir = "/sys/kernel/btf"

// Discovery is what skb: probes can attach to on this kernel.
type Discovery struct {
	// Funcs are the traceable functions with a struct sk_buff * parameter,
	// sorted by name.
	Funcs []SkbFunc
	// Untraceable counts those BTF has but that cannot be traced: inlined
	// everywhere, or marked notrace.
	Untraceable int
	// Source names where the traceable set came from.
	Source string
	// TrampolineOps says each fentry trampoline is an ftrace_ops of its
	// own (struct bpf_trampoline has fops: Linux 6.0 on), whose removal
	// waits an RCU-tasks grace period: detaching fentry costs that per
	// function (session's cost model).
	TrampolineOps bool
}

// DiscoverSkbFuncs scans vmlinux's and the modules' BTF for functions with
// a struct sk_buff * parameter, and keeps those the kernel can trace: the
// ones in tracefs' available_filter_functions or, where that is unreadable,
// the text symbols of /proc/kallsyms. vmlinuxPath overrides vmlinux's BTF
// (--btf); modules are then not scanned.
func DiscoverSkbFuncs(vmlinuxPath string) (*Discovery, error) {
	if vmlinuxPath == "" {
		vmlinuxPath = filepath.Join(btfDir, "vmlinux")
	}
	// Reading kallsyms is the kernel's slowest part: do it meanwhile.
	type traceable struct {
		raw    []byte
		text   bool
		source string
		err    error
	}
	tc := make(chan traceable, 1)
	go func() {
		raw, text, source, err := readTraceable()
		tc <- traceable{raw, text, source, err}
	}()
	raw, err := os.ReadFile(vmlinuxPath)
	if err != nil {
		return nil, fmt.Errorf("read the kernel's BTF: %w", err)
	}
	base, err := parseBTF(raw, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", vmlinuxPath, err)
	}
	skb := base.skbStructs()
	if len(skb) == 0 {
		return nil, fmt.Errorf("%s has no struct sk_buff", vmlinuxPath)
	}
	all := base.skbFuncs("", skb)
	if vmlinuxPath == filepath.Join(btfDir, "vmlinux") {
		mods, _ := os.ReadDir(btfDir)
		for _, m := range mods {
			if m.Name() == "vmlinux" {
				continue
			}
			mraw, err := os.ReadFile(filepath.Join(btfDir, m.Name()))
			if err != nil {
				continue
			}
			mt, err := parseBTF(mraw, base)
			if err != nil {
				continue
			}
			all = append(all, mt.skbFuncs(m.Name(), skb)...)
		}
	}
	tr := <-tc
	if tr.err != nil {
		return nil, tr.err
	}
	ok := map[string]bool{}
	for _, f := range all {
		ok[f.Name] = false
	}
	markTraceable(tr.raw, tr.text, ok)
	d := &Discovery{Source: tr.source, TrampolineOps: base.hasMember("bpf_trampoline", "fops")}
	seen := map[string]bool{}
	for _, f := range all {
		if seen[f.Name] || tracingMachinery(f.Name) {
			continue // static functions of the same name: attach by name once
		}
		seen[f.Name] = true
		if ok[f.Name] {
			d.Funcs = append(d.Funcs, f)
		} else {
			d.Untraceable++
		}
	}
	sort.Slice(d.Funcs, func(i, j int) bool { return d.Funcs[i].Name < d.Funcs[j].Name })
	return d, nil
}

// tracingMachinery reports whether a function is part of the tracepoints'
// own machinery, which takes an skb only to pass it on to tracers.
func tracingMachinery(name string) bool {
	for _, p := range []string{"__bpf_trace_", "__probestub_", "__traceiter_", "perf_trace_", "trace_event_raw_event_", "trace_raw_output_"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// readTraceable reads the list of traceable functions: tracefs'
// available_filter_functions, or where that is unreadable the symbols of
// /proc/kallsyms (text says which).
func readTraceable() (raw []byte, text bool, source string, err error) {
	if TraceableFile != "" {
		raw, err := readProcFile(TraceableFile)
		if err != nil {
			return nil, false, "", fmt.Errorf("--traceable-functions: %w", err)
		}
		return raw, false, TraceableFile, nil
	}
	for _, src := range []struct {
		path string
		text bool
	}{
		{"/sys/kernel/tracing/available_filter_functions", false},
		{"/sys/kernel/debug/tracing/available_filter_functions", false},
		{"/proc/kallsyms", true},
	} {
		raw, err := readProcFile(src.path)
		if err == nil && len(raw) > 0 {
			return raw, src.text, src.path, nil
		}
	}
	return nil, false, "", fmt.Errorf("cannot tell which functions are traceable: neither available_filter_functions nor /proc/kallsyms is readable")
}

// markTraceable sets names[n] for each name of the map that the list has;
// with text, the list is kallsyms and only text symbols count.
func markTraceable(raw []byte, text bool, names map[string]bool) {
	eachListed(raw, text, func(name []byte) {
		if _, ok := names[string(name)]; ok {
			names[string(name)] = true
		}
	})
}

// Match keeps the functions whose name matches the glob.
func (d *Discovery) Match(glob string) []SkbFunc {
	var out []SkbFunc
	for _, f := range d.Funcs {
		if ok, _ := path.Match(glob, f.Name); ok {
			out = append(out, f)
		}
	}
	return out
}

// readProcFile reads a file whose size procfs does not tell, in large reads:
// os.ReadFile's small first reads cost seq_file a restart each.
func readProcFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, 0, 8<<20)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF || (err == nil && n == 0) {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// ModuleBTFMissing reports whether modules are loaded but the kernel gives
// none of them BTF (Linux 5.11 added module BTF; CONFIG_DEBUG_INFO_BTF_MODULES
// may be off): skb: probes then see vmlinux's functions only.
func ModuleBTFMissing() bool {
	mods, err := os.ReadFile("/proc/modules")
	if err != nil || len(bytes.TrimSpace(mods)) == 0 {
		return false
	}
	ents, err := os.ReadDir(btfDir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if e.Name() != "vmlinux" {
			return false
		}
	}
	return true
}
