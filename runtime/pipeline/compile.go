package pipeline

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/runtime/kernel"
	"github.com/skbtrace/skbtrace/runtime/session"
)

// compile generates the programs as they will be loaded: skb: globs
// resolved against this kernel (functions or tracepoints), events to the
// buffer --events names. Where auto has both fentry and kprobe to choose
// from, the script is compiled for kprobes first, and its shape (functions,
// program size) weighs the two (session.PickByCost). What it says along
// the way goes to Config.Warn.
func (p *Plan) compile() (*codegen.Output, *session.FuncAttach, error) {
	choice, err := skbBackends(p.cfg, p.Script)
	if err != nil {
		return nil, nil, err
	}
	p.choice = choice
	if choice == nil || len(choice.works) < 2 {
		var b session.Backend
		if choice != nil && len(choice.works) == 1 {
			b = choice.works[0]
		}
		return p.compileFor(choice, b, "")
	}
	// Say nothing while compiling for the estimate: what matters is said
	// when compiling for the backend chosen.
	quiet := *p
	quiet.cfg.Warn = nil
	out, _, err := quiet.compileFor(choice, session.BackendKprobe, "")
	if err != nil {
		return p.compileFor(choice, choice.works[0], "")
	}
	b, why := session.PickByCost(choice.works, choice.shape(out), choice.disc.TrampolineOps)
	return p.compileFor(choice, b, why)
}

// compileFor generates the programs with skb: probes attached by backend b.
func (p *Plan) compileFor(choice *skbChoice, b session.Backend, weighed string) (*codegen.Output, *session.FuncAttach, error) {
	cfg, script, info := p.cfg, p.Script, p.Info
	opts, funcs, err := skbBackend(cfg, script, p.types.whole, choice, b, weighed)
	if err == nil {
		funcs, err = globBackend(cfg, info, funcs)
	}
	if err == nil {
		err = eventOptions(cfg, &opts)
	}
	if err != nil {
		return nil, nil, err
	}
	if funcs != nil {
		// kprobe-multi links take programs compiled for them.
		opts.Backend, opts.GlobBackend = funcs.Backend, funcs.Kprobe
	}
	opts.Ksym = kernel.KsymAddr
	opts.HaveFuncIP = kernel.HaveFuncIPHelper
	opts.HaveHelper = kernel.HaveHelper
	if cfg.Verbose && !kernel.HaveFuncIPHelper() {
		cfg.warn("this kernel has no bpf_get_func_ip (Linux 5.15 added it): func comes from each program's own function, or a kprobe's instruction pointer")
	}
	opts.Snaplen = cfg.Snaplen
	opts.RuleFlows = cfg.RuleFlows
	opts.Sample, opts.MaxRate = cfg.Sample, cfg.MaxRate
	if len(info.Capture) > 0 {
		// Packets beyond their linear part: their pages' addresses.
		spec, err := p.types.whole()
		var mul, off uint64
		if err == nil {
			mul, off, err = kernel.PageVirt(spec)
		}
		if err != nil {
			cfg.warn(fmt.Sprintf("-w: packets are cut at their linear part: %v", err))
		}
		opts.PageMul, opts.PageOff = mul, off
	}
	out, err := codegen.Compile(script, info, opts)
	return out, funcs, err
}

// eventOptions applies --events and --buffer-size: a ring buffer where the
// kernel has one, else a perf buffer.
func eventOptions(cfg Config, opts *codegen.Options) error {
	switch cfg.Events {
	case "auto":
		opts.PerfEvents = !kernel.HaveRingBuffer()
	case "ringbuf":
		if !kernel.HaveRingBuffer() {
			return fmt.Errorf("--events ringbuf: this kernel has no BPF ring buffer (Linux 5.8 or later); use --events perf")
		}
	case "perf":
		opts.PerfEvents = true
	default:
		return fmt.Errorf("--events takes auto, ringbuf or perf, not %q", cfg.Events)
	}
	if cfg.BufferSize != "" {
		n, err := parseSize(cfg.BufferSize)
		if err != nil || n < 4096 || n > 1<<30 {
			return fmt.Errorf("--buffer-size takes a size from 4K to 1G, such as 64K or 8M, not %q", cfg.BufferSize)
		}
		opts.EventsBytes = int(n)
	}
	return nil
}

// parseSize reads 4096, 64K, 8M or 1G.
func parseSize(s string) (int64, error) {
	mult := int64(1)
	switch strings.ToUpper(s[len(s)-1:]) {
	case "K":
		mult = 1 << 10
	case "M":
		mult = 1 << 20
	case "G":
		mult = 1 << 30
	}
	if mult > 1 {
		s = s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n * mult, err
}
