package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/skbtrace/skbtrace/runtime/attach"
	"github.com/skbtrace/skbtrace/runtime/kernel"
	"github.com/skbtrace/skbtrace/runtime/session"
)

// bpftrace 0.26's flags and environment variables about the kernel it
// attaches to (its man page): --no-feature, --traceable-functions,
// BPFTRACE_BTF and BPFTRACE_VMLINUX.
type btKernelOptions struct {
	// noFeature is --no-feature FEATURE,...: kprobe_multi turns
	// kprobe-multi links off; uprobe_multi and kprobe_session are
	// accepted and change nothing (skbtrace attaches uprobes one by one
	// and makes no kprobe sessions).
	noFeature []string
	// traceable is --traceable-functions FILENAME.
	traceable string
}

// btFeatures are the features --no-feature takes, as bpftrace names them.
var btFeatures = []string{"kprobe_multi", "kprobe_session", "uprobe_multi"}

func addBtKernelFlags(fs *pflag.FlagSet, k *btKernelOptions) {
	fs.StringSliceVar(&k.noFeature, "no-feature", nil, "do not use these kernel `FEATURE`s though the kernel has them: kprobe_multi (auto then takes fentry or kprobe); kprobe_session and uprobe_multi, which skbtrace does not use, are accepted")
	fs.StringVar(&k.traceable, "traceable-functions", "", "read the traceable kernel functions from `FILENAME` (available_filter_functions' format: \"symbol\" or \"symbol [module]\" a line) instead of tracefs")
}

// apply checks the options and sets what they change; BPFTRACE_BTF is
// --btf where that is not given, BPFTRACE_VMLINUX the kernel image that
// sizes functions for kprobe:FN+OFFSET.
func (k btKernelOptions) apply(o *options, stderr io.Writer) error {
	for _, f := range k.noFeature {
		if !slices.Contains(btFeatures, f) {
			return fmt.Errorf("--no-feature takes %s, not %q", strings.Join(btFeatures, ","), f)
		}
		if f == "kprobe_multi" {
			session.NoKprobeMulti = true
		}
	}
	if k.traceable != "" {
		f, err := os.Open(k.traceable)
		if err != nil {
			return fmt.Errorf("--traceable-functions: %w", err)
		}
		f.Close()
		kernel.TraceableFile = k.traceable
	}
	if v := os.Getenv("BPFTRACE_BTF"); v != "" && o.btfFile == "" {
		// As bpftrace, a file that cannot be read is a warning, and the
		// kernel's own BTF is read instead.
		if _, err := os.Stat(v); err != nil {
			o.warner(stderr)(fmt.Sprintf("WARNING: BPFTRACE_BTF: cannot read BTF from %s (%v): the kernel's BTF is read instead", v, err))
		} else {
			o.btfFile = v
		}
	}
	if v := os.Getenv("BPFTRACE_VMLINUX"); v != "" {
		if _, err := os.Stat(v); err != nil {
			return fmt.Errorf("BPFTRACE_VMLINUX: %w", err)
		}
		attach.VmlinuxPath = v
	}
	return nil
}
