package pipeline

import "github.com/skbtrace/skbtrace/runtime/kernel"

// Config is what shapes a run: the flags that decide what is compiled and
// how it attaches.
type Config struct {
	// BTFFile is --btf: the kernel's types from this file instead of
	// /sys/kernel/btf/vmlinux (and no BTF cache).
	BTFFile string
	// Params are the script's positional parameters ($1, $2...).
	Params []string
	// Backend is --backend: auto (or ""), kprobe-multi, kprobe, fentry or
	// tracepoint.
	Backend string
	// Events is --events: auto, ringbuf or perf; BufferSize --buffer-size
	// (4096, 64K, 8M; "" for the default).
	Events, BufferSize string
	// Filter is --filter's tcpdump filter, ANDed into the script's skb
	// probes (passes.Filter); Capture is -w: every skb probe captures
	// (passes.Capture), and capture() is allowed.
	Filter  string
	Capture bool
	// Scope is set by the pod filters (--pod, --namespace, --container,
	// --netns): every probe on events tests its network namespace against
	// codegen.ScopeMap (passes.Scope), which the session keeps current.
	Scope bool
	// Snaplen is how many bytes of each packet -w writes.
	Snaplen int
	// RuleFlows keeps rule()'s addresses and ports for the nftables trace
	// to match drops by (--nftrace: codegen.Options.RuleFlows).
	RuleFlows bool
	// Sample and MaxRate are --sample and --max-rate: codegen.Options'
	// Sample and MaxRate (0: no gate).
	Sample, MaxRate uint32
	// Verbose says more (-v): timings, what the kernel lacks.
	Verbose bool
	// Warn hears what the pipeline says along the way, a line at a time,
	// without skbtrace's prefix; nil drops it.
	Warn func(msg string)
}

// warn says a line through Config.Warn, if any.
func (c *Config) warn(msg string) {
	if c.Warn != nil {
		c.Warn(msg)
	}
}

// discovery is this kernel's (or --btf's) skb functions, cached on disk.
func (c *Config) discovery() (*kernel.Discovery, error) {
	d, _, err := kernel.CachedDiscovery(c.BTFFile)
	return d, err
}
