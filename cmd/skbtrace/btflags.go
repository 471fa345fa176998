package main

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/passes"
	"github.com/skbtrace/skbtrace/runtime/pipeline"
)

// btOptions are bpftrace 0.26's flags that skbtrace takes as bpftrace
// does (its man page, OPTIONS): -p, -k, -B, -I, --include, --no-warnings,
// --probe-filter, --dry-run, --info, --unsafe, -V.
type btOptions struct {
	// pid is -p PID: every probe that runs in a process's context acts
	// only for PID (passes.Pid), and tracing ends when PID exits.
	pid int
	// warnings is -k: a note that failed probe reads read zero.
	warnings bool
	// noWarnings is --no-warnings: no warning or note on stderr.
	noWarnings bool
	// buffering is -B: line, full or none.
	buffering string
	// include and includeDirs are --include and -I: where #include finds
	// the headers whose #define constants it reads (types come from BTF).
	include, includeDirs []string
	// probeFilter is --probe-filter REGEX.
	probeFilter string
	// dryRun is --dry-run: compile and load, attach nothing, run nothing.
	dryRun bool
	// info is --info: what this kernel's BPF supports.
	info bool
	// unsafe is --unsafe: accepted; skbtrace has no unsafe builtin.
	unsafe bool
}

// addBpftraceFlags adds bpftrace's flags to fs.
func addBpftraceFlags(fs *pflag.FlagSet, b *btOptions) {
	fs.IntVarP(&b.pid, "pid", "p", 0, "act only in process `PID` (every probe but begin, end and interval) and end tracing when it exits, as bpftrace's -p")
	fs.BoolVarP(&b.warnings, "warnings", "k", false, "bpftrace's -k: skbtrace's failed probe reads read zero and are not reported (it says so)")
	fs.BoolVar(&b.noWarnings, "no-warnings", false, "print no warning or note on stderr (errors still are)")
	fs.StringVarP(&b.buffering, "buffering", "B", "line", "output buffering `MODE`: line, full or none (skbtrace writes what it has whenever no event is pending, so all three print at once)")
	fs.StringArrayVar(&b.include, "include", nil, "bpftrace's #include `FILE` before the script: its #define constants, where it is found (types come from BTF)")
	fs.StringArrayVarP(&b.includeDirs, "include-dir", "I", nil, "bpftrace's header search path `DIR`: where #include finds the headers whose #define constants it reads (types come from BTF)")
	fs.StringVar(&b.probeFilter, "probe-filter", "", "run only the probes whose name matches `REGEX` (as written, or in full: tracepoint:CAT:NAME, begin, interval:ms:100)")
	fs.BoolVar(&b.dryRun, "dry-run", false, "compile the script and load its programs (the kernel's verifier checks them), then exit without attaching or running any probe")
	fs.BoolVar(&b.info, "info", false, "print what this kernel's BPF supports (program, map and probe types, helpers), then exit")
	fs.BoolVar(&b.unsafe, "unsafe", false, "bpftrace's --unsafe: accepted; skbtrace has no unsafe builtin (system(), signal(), override() are out of scope)")
}

// check validates the flags' values.
func (b btOptions) check() error {
	switch b.buffering {
	case "line", "full", "none":
	default:
		return fmt.Errorf("-B takes line, full or none, not %q", b.buffering)
	}
	if b.pid < 0 {
		return fmt.Errorf("-p takes a process ID, not %d", b.pid)
	}
	if b.pid > 0 {
		if err := unix.Kill(b.pid, 0); err != nil && err != unix.EPERM {
			return fmt.Errorf("-p %d: no such process", b.pid)
		}
	}
	if b.probeFilter != "" {
		if _, err := regexp.Compile(b.probeFilter); err != nil {
			return fmt.Errorf("--probe-filter: %v", err)
		}
	}
	return nil
}

// rewrite applies -p and --probe-filter to a parsed script; a filter that
// leaves no probe is an error.
func (b btOptions) rewrite(s *lang.Script) (*lang.Script, error) {
	if b.probeFilter != "" {
		s = passes.ProbeFilter(s, regexp.MustCompile(b.probeFilter))
		if len(s.Probes) == 0 {
			return nil, fmt.Errorf("--probe-filter %q matches no probe of the script", b.probeFilter)
		}
	}
	if b.pid > 0 {
		s = passes.Pid(s, uint64(b.pid))
	}
	if b.noWarnings {
		s = passes.DropWarnf(s)
	}
	return s, nil
}

// notes says on stderr what the accepted-but-moot flags do here.
func (b btOptions) notes(stderr io.Writer) {
	if b.warnings && !b.noWarnings {
		fmt.Fprintln(stderr, "skbtrace: -k: a probe read that fails reads zero; skbtrace does not report it")
	}
}

// pidExited is closed when -p's process exits (nil without -p).
func (b btOptions) pidExited() <-chan struct{} {
	if b.pid <= 0 {
		return nil
	}
	done := make(chan struct{})
	fd, err := unix.PidfdOpen(b.pid, 0)
	if err != nil {
		close(done) // gone already
		return done
	}
	go func() {
		defer unix.Close(fd)
		defer close(done)
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			if _, err := unix.Poll(fds, -1); err != unix.EINTR {
				return
			}
		}
	}()
	return done
}

// envConfig is the script with bpftrace's environment variables as config entries: each
// BPFTRACE_NAME is config variable name, and overrides the script's config
// block, as in bpftrace. Old names map to their config names.
func envConfig(s *lang.Script) *lang.Script {
	renamed := map[string]string{"BPFTRACE_STRLEN": "max_strlen", "BPFTRACE_MAP_KEYS_MAX": "max_map_keys",
		"BPFTRACE_CAT_BYTES_MAX": "max_cat_bytes", "BPFTRACE_MAX_PROBES": "max_probes", "BPFTRACE_NO_CPP_DEMANGLE": "cpp_demangle"}
	var entries []*lang.ConfigEntry
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		name, ok := strings.CutPrefix(k, "BPFTRACE_")
		if !ok {
			continue
		}
		key := strings.ToLower(name)
		if r, ok := renamed[k]; ok {
			key = r
		}
		if !configNames[key] {
			continue // not a config variable (BPFTRACE_BTF, BPFTRACE_KERNEL_SOURCE...): bpftrace reads it elsewhere
		}
		if k == "BPFTRACE_NO_CPP_DEMANGLE" {
			v = map[bool]string{true: "0", false: "1"}[v == "1"]
		}
		e := &lang.ConfigEntry{At: s.At, Key: key, KeySpan: s.At, Value: v, ValueSpan: s.At}
		if n, err := strconv.ParseUint(v, 0, 64); err == nil {
			e.Int, e.IsInt = n, true
		} else {
			e.IsStr = true
		}
		entries = append(entries, e)
	}
	if len(entries) == 0 {
		return s
	}
	cfg := &lang.Config{At: s.At}
	if s.Config != nil {
		cfg.At = s.Config.At
		for _, e := range s.Config.Entries {
			if !setByEnv(entries, e.Key) {
				cfg.Entries = append(cfg.Entries, e)
			}
		}
	}
	cfg.Entries = append(cfg.Entries, entries...)
	cp := *s
	cp.Config = cfg
	return &cp
}

// configNames are bpftrace's config variables that an environment
// variable sets (its man page, "Config Variables"); the checker says what
// each does here.
var configNames = map[string]bool{"cache_user_symbols": true, "cpp_demangle": true, "lazy_symbolication": true, "log_size": true,
	"max_bpf_progs": true, "max_cat_bytes": true, "max_map_keys": true, "max_probes": true, "max_strlen": true,
	"max_type_res_iterations": true, "missing_probes": true, "on_stack_limit": true, "perf_rb_pages": true,
	"print_maps_on_exit": true, "stack_mode": true, "str_trunc_trailer": true, "symbol_source": true,
	"license": true, "show_debug_info": true}

// warner is the pipeline's warner, silent with --no-warnings.
func (o options) warner(stderr io.Writer) func(string) {
	if o.bt.noWarnings {
		return func(string) {}
	}
	return warner(stderr)
}

// setByEnv reports whether an environment variable sets config key (as
// max_strlen or BPFTRACE_MAX_STRLEN).
func setByEnv(entries []*lang.ConfigEntry, key string) bool {
	key = strings.ToLower(strings.TrimPrefix(strings.ToUpper(key), "BPFTRACE_"))
	for _, e := range entries {
		if e.Key == key {
			return true
		}
	}
	return false
}

// dryRun is --dry-run: the plan compiled and its programs loaded (the
// verifier checks them), nothing attached or run. It fails where the
// programs do not compile or load.
func dryRun(plan *pipeline.Plan, stages debugStages, stdout, stderr io.Writer) int {
	if err := plan.Compile(); err != nil {
		return report(stderr, err)
	}
	stages.printCode(plan, stdout, stderr)
	if err := plan.Load(); err != nil {
		return report(stderr, err)
	}
	return 0
}

// stdinProgram is bpftrace's `bpftrace -`: the program read from standard
// input, where no -e gives one and the first argument is "-"; it returns
// the arguments left (the script's $1, $2...).
func stdinProgram(o *options, args []string) ([]string, error) {
	if o.programSet || len(args) == 0 || args[0] != "-" {
		return args, nil
	}
	b, err := io.ReadAll(os.Stdin)
	if err != nil {
		return nil, fmt.Errorf("reading the program from stdin: %w", err)
	}
	o.program, o.programSet = string(b), true
	return args[1:], nil
}
