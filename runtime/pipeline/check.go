package pipeline

import (
	"errors"
	"fmt"
	"slices"

	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/passes"
	"github.com/skbtrace/skbtrace/runtime/kernel"
)

// checkScript checks a script with the kernel types that types returns,
// prunes it to what this kernel runs (check.Prune), then applies --filter
// and -w (passes.Filter, passes.Capture). The script given is not changed.
// It returns the script to compile and what the checker learnt of it.
func checkScript(cfg Config, script *lang.Script, types func() (check.BTF, error)) (*lang.Script, *check.Info, error) {
	spec, err := types()
	if err != nil {
		return nil, nil, err
	}
	copts := CheckOptions(spec, cfg.Params, cfg.warn)
	info, err := check.Check(script, copts)
	if err == nil {
		script, info, err = check.Prune(script, info, copts)
	}
	if err != nil {
		return nil, nil, err
	}
	// --filter and -w change the script's skb probes: check it again.
	// Which probes have an skb, as the checker found, by the probe's span:
	// the copies the passes make of a probe keep it.
	skbAt := map[lang.Span]bool{}
	infoAt := map[lang.Span]*check.ProbeInfo{}
	for p, pi := range info.Probes {
		skbAt[p.At], infoAt[p.At] = pi.Skb, pi
	}
	skb := func(p *lang.Probe) bool { return skbAt[p.At] }
	changed := false
	if cfg.Filter != "" {
		if script, changed = passes.Filter(script, cfg.Filter, skb); !changed {
			return nil, nil, errors.New("--filter: no probe of the script has an skb to filter")
		}
	}
	if cfg.Scope {
		sock := func(p *lang.Probe) (string, bool) { return sockParam(infoAt[p.At]) }
		if script, changed = passes.Scope(script, skb, sock); !changed {
			return nil, nil, errors.New("--pod, --namespace, --container and --netns choose the packets of network namespaces: no probe of the script runs on packets or in a process")
		}
	}
	switch captures := passes.CallsCapture(script); {
	case !cfg.Capture && captures:
		return nil, nil, errors.New("capture() writes to the file of -w FILE: give one")
	case cfg.Capture && !captures:
		var added bool
		if script, added = passes.Capture(script, skb); !added {
			return nil, nil, errors.New("-w: no probe of the script has an skb to capture")
		}
		changed = true
	case cfg.Capture:
		changed = true
	}
	if changed {
		// The notes of what Prune dropped stay: the script checked again
		// no longer has it.
		notes := info.Notes
		if info, err = check.Check(script, copts); err != nil {
			return nil, nil, err
		}
		for _, n := range info.Notes {
			if !slices.Contains(notes, n) {
				notes = append(notes, n)
			}
		}
		info.Notes = notes
	}
	for _, n := range info.Notes {
		cfg.warn("NOTE: " + n)
	}
	return script, info, nil
}

// sockParam is the name of the first argument that is a struct sock
// pointer, or, with cast, a tracepoint's untyped skaddr (the sock and tcp
// tracepoints' format); "" without one.
func sockParam(pi *check.ProbeInfo) (name string, cast bool) {
	if pi == nil {
		return "", false
	}
	for _, p := range pi.Params {
		if ptr, ok := btf.UnderlyingType(p.BTF).(*btf.Pointer); ok {
			if st, ok := btf.UnderlyingType(ptr.Target).(*btf.Struct); ok && st.Name == "sock" {
				return p.Name, false
			}
		}
	}
	for _, p := range pi.Params {
		if p.Name == "skaddr" {
			return p.Name, true
		}
	}
	if pi.Record != nil {
		for _, m := range pi.Record.Members {
			if m.Name == "skaddr" {
				return m.Name, true
			}
		}
	}
	return "", false
}

// loadBTF loads the kernel's whole BTF, or file's where one is given.
func loadBTF(file string) (*btf.Spec, error) {
	if file != "" {
		s, err := btf.LoadSpec(file)
		if err != nil {
			return nil, fmt.Errorf("load BTF from %s: %w", file, err)
		}
		return s, nil
	}
	s, err := kernel.BTF()
	if err != nil {
		return nil, fmt.Errorf("this kernel has no BTF (/sys/kernel/btf/vmlinux): %w; pass --btf FILE", err)
	}
	return s, nil
}
