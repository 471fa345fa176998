package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/stdlib"
)

// Config is what a script's config block (bpftrace's `config = { ... }`)
// sets that skbtrace applies; the defaults where it sets nothing.
type Config struct {
	// MissingProbes says what a probe that names nothing on this kernel
	// is: "error" (skbtrace's default), "warn" (dropped, with a note) or
	// "ignore" (dropped). A script none of whose probes is left is an
	// error whatever it says.
	MissingProbes string
	// PrintMapsOnExit is bpftrace's print_maps_on_exit: false leaves the
	// maps unprinted at exit.
	PrintMapsOnExit bool
	// MaxCatBytes is how much of a file cat() prints.
	MaxCatBytes int
	// UnstableMapDecl is bpftrace 0.26's unstable_map_decl: "error"
	// makes a map declaration an error (configunstable.go).
	UnstableMapDecl string
	// StrTruncTrailer is str_trunc_trailer where the script sets it
	// (TrailerSet; "" turns the trailer off): what follows a string
	// str() cut at max_strlen, else bpftrace's "..".
	StrTruncTrailer string
	TrailerSet      bool
	// StackMode is stack_mode where the script or BPFTRACE_STACK_MODE
	// sets it: how kstack and kstack() print ("" is bpftrace's mode).
	StackMode string
	// MaxStrlen is max_strlen where the script or BPFTRACE_MAX_STRLEN
	// sets it (at most stdlib.MaxStrlen: strings too large for the BPF
	// stack live in the scratch area), else 0: str() reads 63 bytes.
	MaxStrlen int
	// OnStackLimit is on_stack_limit where the script or
	// BPFTRACE_ON_STACK_LIMIT sets it (at least 8), else 0: the values
	// larger than it live in the per-CPU scratch area, not on the BPF
	// stack. Unset, a probe's values live on the stack where they fit,
	// and those above bpftrace's 32 bytes in the scratch area where not.
	OnStackLimit int
}

// The values of MissingProbes.
const (
	MissingError  = "error"
	MissingWarn   = "warn"
	MissingIgnore = "ignore"
)

// DefaultMaxCatBytes is bpftrace 0.23's max_cat_bytes.
const DefaultMaxCatBytes = 10000

func defaultConfig() Config {
	return Config{MissingProbes: MissingError, PrintMapsOnExit: true, MaxCatBytes: DefaultMaxCatBytes}
}

// configValue is the kind of value a config variable takes.
type configValue uint8

const (
	cfgInt  configValue = iota // an integer
	cfgBool                    // 0, 1, true or false
	cfgWord                    // one of words, as a string or a name
	cfgText                    // any string
)

// configVar is one of bpftrace 0.23's config variables: what it takes,
// and how skbtrace applies it (apply) or why it does not need to (note).
type configVar struct {
	value configValue
	words []string
	apply func(*Config, *lang.ConfigEntry)
	note  string
}

// configVars are bpftrace 0.23's config variables (its man page,
// "Config Variables"), by their lower-case names.
var configVars = map[string]configVar{
	"missing_probes": {value: cfgWord, words: []string{MissingError, MissingWarn, MissingIgnore},
		apply: func(c *Config, e *lang.ConfigEntry) { c.MissingProbes = e.Value }},
	"print_maps_on_exit": {value: cfgBool,
		apply: func(c *Config, e *lang.ConfigEntry) { c.PrintMapsOnExit = configTrue(e) }},
	"max_cat_bytes": {value: cfgInt,
		apply: func(c *Config, e *lang.ConfigEntry) { c.MaxCatBytes = int(min(e.Int, 1<<30)) }},
	"max_map_keys":            {value: cfgInt, note: "each map of skbtrace holds up to 10240 keys"},
	"max_strlen":              {value: cfgInt, apply: func(c *Config, e *lang.ConfigEntry) { c.MaxStrlen = int(max(1, min(e.Int, stdlib.MaxStrlen))) }},
	"max_probes":              {value: cfgInt, note: "skbtrace attaches a tracepoint glob to at most 1024 tracepoints, and skb: to every function it finds"},
	"max_bpf_progs":           {value: cfgInt, note: "skbtrace has no limit of its own on its programs"},
	"max_type_res_iterations": {value: cfgInt, note: "skbtrace resolves types from BTF without a limit"},
	"log_size":                {value: cfgInt, note: "skbtrace sizes the verifier's log itself (-v prints it)"},
	"on_stack_limit":          {value: cfgInt, apply: func(c *Config, e *lang.ConfigEntry) { c.OnStackLimit = int(max(8, min(e.Int, 1<<20))) }},
	"perf_rb_pages":           {value: cfgInt, note: "skbtrace's ring buffer is 4 MiB"},
	"stack_mode": {value: cfgWord, words: []string{"bpftrace", "perf", "raw"}, apply: func(c *Config, e *lang.ConfigEntry) {
		c.StackMode = map[string]string{"perf": "perf", "raw": "raw"}[e.Value]
	}},
	"str_trunc_trailer": {value: cfgText, apply: func(c *Config, e *lang.ConfigEntry) { c.StrTruncTrailer, c.TrailerSet = e.Value, true }},
	"license": {value: cfgWord, words: []string{"GPL", "GPL v2", "GPL and additional rights", "Dual BSD/GPL", "Dual MIT/GPL", "Dual MPL/GPL"},
		note: "skbtrace loads its programs as GPL, which each of these allows"},
	"show_debug_info":    {value: cfgBool, note: "kernel stacks print function+offset; skbtrace reads no debug info"},
	"cache_user_symbols": {value: cfgWord, words: []string{"PER_PID", "PER_PROGRAM", "NONE", "0", "1"}, note: userSpaceNote},
	"cpp_demangle":       {value: cfgBool, note: userSpaceNote},
	"lazy_symbolication": {value: cfgBool, note: userSpaceNote},
	"symbol_source":      {value: cfgWord, words: []string{"dwarf", "symbol_table"}, note: userSpaceNote},
}

const userSpaceNote = "it is about user-space symbols, and skbtrace traces the kernel"

// envOnlyVars are bpftrace's settings that only its environment sets.
var envOnlyVars = map[string]string{
	"btf":            "give skbtrace the kernel's BTF with --btf FILE",
	"debug_output":   "",
	"kernel_build":   "",
	"kernel_source":  "",
	"vmlinux":        "",
	"color":          "",
	"max_ast_nodes":  "",
	"verify_llvm_ir": "",
}

// config checks a script's config block and records what it sets.
func (c *checker) config(cfg *lang.Config) {
	c.info.Config = defaultConfig()
	if cfg == nil {
		return
	}
	seen := map[string]*lang.ConfigEntry{}
	for _, e := range cfg.Entries {
		name := strings.TrimPrefix(strings.ToLower(e.Key), "bpftrace_")
		key := nameNode{e.KeySpan}
		if prev := seen[name]; prev != nil {
			c.errorf(key, "set it once", "config variable %s is set twice (first at %s)", e.Key, prev.At.Start)
			continue
		}
		seen[name] = e
		v, ok := configVars[name]
		if !ok {
			if hint, env := envOnlyVars[name]; env {
				c.errorf(key, hint, "%s can only be set as an environment variable in bpftrace", e.Key)
				continue
			}
			var names []string
			for n := range configVars {
				names = append(names, n)
			}
			slices.Sort(names)
			hint := didYouMean(name, names)
			if hint == "" {
				hint = "the config variables are " + strings.Join(names, ", ")
			}
			c.errorf(key, hint, "unknown config variable %q", e.Key)
			continue
		}
		if !c.configValueOK(e, v) {
			continue
		}
		if v.apply != nil {
			v.apply(&c.info.Config, e)
			if name == "max_strlen" && e.Int > stdlib.MaxStrlen {
				c.note(fmt.Sprintf("config: %s = %d: skbtrace reads at most %d bytes of a string (its strings and records share a %d KiB per-CPU scratch area); longer ones print cut there, with ..", e.Key, e.Int, stdlib.MaxStrlen, 32))
			}
		} else {
			c.note(fmt.Sprintf("config: %s = %s has no effect: %s", e.Key, e.Value, v.note))
		}
	}
}

// configValueOK reports whether an entry's value is one its variable
// takes, having said why where it is not.
func (c *checker) configValueOK(e *lang.ConfigEntry, v configVar) bool {
	val := nameNode{e.ValueSpan}
	switch v.value {
	case cfgInt:
		if !e.IsInt {
			c.errorf(val, "write a number: "+e.Key+" = 1024", "config variable %s takes an integer", e.Key)
			return false
		}
	case cfgBool:
		if !(e.IsInt && e.Int <= 1) && !(!e.IsStr && !e.IsInt && (e.Value == "true" || e.Value == "false")) {
			c.errorf(val, "write "+e.Key+" = 0 or "+e.Key+" = 1", "config variable %s is 0 or 1", e.Key)
			return false
		}
	case cfgWord:
		if e.IsInt && slices.Contains(v.words, e.Value) {
			return true
		}
		if e.IsInt || !slices.Contains(v.words, e.Value) {
			c.errorf(val, "its values are "+quoteAll(v.words), "config variable %s cannot be %s", e.Key, c.src.Slice(e.ValueSpan))
			return false
		}
	case cfgText:
		if !e.IsStr {
			c.errorf(val, "write a string: "+e.Key+" = \"...\"", "config variable %s takes a string", e.Key)
			return false
		}
	}
	return true
}

func configTrue(e *lang.ConfigEntry) bool {
	return e.IsInt && e.Int == 1 || e.Value == "true"
}

func quoteAll(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = fmt.Sprintf("%q", w)
	}
	return strings.Join(q, ", ")
}
