package session

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/skbtrace/skbtrace/codegen"
)

// What --sample and --max-rate took out, as Misses names it
// (skbtrace_<what>_total in the metrics).
const (
	MissSampledOut = "sampled_out"
	MissCapped     = "capped"
)

// Overhead is what --sample and --max-rate's gates did, summed over the
// CPUs, and what skbtrace cost.
type Overhead struct {
	// Gated says the programs have a gate: the counts below are read.
	// Sampling says they have --sample's; SampleN is its one in N now.
	// MaxRate is --max-rate's cap where they have its gate, else 0.
	Gated, Sampling bool
	SampleN         uint32
	MaxRate         uint32
	// SampledEvents and SampledPackets are the events and skbs --sample
	// left out, KeptPackets the skbs it kept; CappedEvents the events
	// --max-rate left out.
	SampledEvents, SampledPackets, KeptPackets, CappedEvents uint64
}

// Overhead reads the gates' counts. Safe while tracing and after Detach
// (the maps stay until Close).
func (s *Session) Overhead() (Overhead, error) {
	var o Overhead
	if s.coll == nil {
		return o, nil
	}
	m := s.coll.Maps[codegen.OverheadMap]
	if m == nil {
		return o, nil
	}
	o.Gated, o.MaxRate = true, s.out.MaxRate
	var vals []codegen.OverheadValue
	if err := m.Lookup(uint32(0), &vals); err != nil {
		return o, fmt.Errorf("read the overhead map: %w", err)
	}
	for _, v := range vals {
		o.SampledEvents += v.SampledEvents
		o.SampledPackets += v.SampledPackets
		o.KeptPackets += v.KeptPackets
		o.CappedEvents += v.CappedEvents
	}
	if r := s.coll.Maps[codegen.SampleRateMap]; r != nil {
		o.Sampling = true
		var th uint64
		if err := r.Lookup(uint32(0), &th); err != nil {
			return o, fmt.Errorf("read the sample rate: %w", err)
		}
		if th > 0 {
			o.SampleN = uint32((uint64(1) << 32) / th)
		}
	}
	return o, nil
}

// SetSample makes --sample keep one new skb in n from now on (skbs
// already decided keep their decision). ErrNoSampling where the programs
// have no --sample gate.
func (s *Session) SetSample(n uint32) error {
	r := s.coll.Maps[codegen.SampleRateMap]
	if r == nil {
		return ErrNoSampling
	}
	return r.Put(uint32(0), codegen.SampleThreshold(n))
}

// ErrNoSampling is SetSample on programs compiled without --sample.
var ErrNoSampling = errors.New("the programs have no --sample gate")

// OverheadMisses adds the gates' counts to m: a MissReader for
// AddMisses. The reasons are fixed (they are metrics labels).
func (s *Session) OverheadMisses(m *Misses) {
	o, err := s.Overhead()
	if err != nil || !o.Gated {
		return
	}
	if o.Sampling {
		m.Add(Miss{What: MissSampledOut, Reason: "--sample: events of the packets not kept", Count: o.SampledEvents})
	}
	if o.MaxRate > 0 {
		m.Add(Miss{What: MissCapped, Reason: "--max-rate: over the events a second allowed on a CPU", Count: o.CappedEvents})
	}
}

// ProgramTime is the programs' run time and runs so far, as the kernel
// counts them (bpf_prog_info's run_time_ns and run_cnt: while BPF stats
// are on, see EnableRunTimeStats).
type ProgramTime struct {
	Run  time.Duration
	Runs uint64
}

// ProgramTime sums the run time of the session's programs: those its
// links run (an fentry program's own descriptor is closed once linked)
// and the collection's, each once.
func (s *Session) ProgramTime() ProgramTime {
	var pt ProgramTime
	if s.coll == nil {
		return pt
	}
	s.eachProgram(func(prog *ebpf.Program, _ *ebpf.ProgramInfo) {
		if st, err := prog.Stats(); err == nil {
			pt.Run += st.Runtime
			pt.Runs += st.RunCount
		}
	}, nil)
	return pt
}

// bpfStatsSysctl is kernel.bpf_stats_enabled.
const bpfStatsSysctl = "/proc/sys/kernel/bpf_stats_enabled"

// EnableRunTimeStats has the kernel count BPF programs' run time for as
// long as the returned closer is open: through a BPF_ENABLE_STATS
// descriptor (Linux 5.8), which the kernel undoes when it is closed, even
// if skbtrace is killed, rather than by writing the sysctl. Where
// kernel.bpf_stats_enabled is on already it does nothing; on reports
// whether run times are counted.
func EnableRunTimeStats() (closer io.Closer, on bool, err error) {
	if b, err := os.ReadFile(bpfStatsSysctl); err == nil && strings.TrimSpace(string(b)) == "1" {
		return io.NopCloser(nil), true, nil
	}
	c, err := ebpf.EnableStats(uint32(unix.BPF_STATS_RUN_TIME))
	if err != nil {
		return io.NopCloser(nil), false, fmt.Errorf("count BPF programs' run time: %w", err)
	}
	return c, true, nil
}

// SelfCPU is the CPU time skbtrace's process used so far, user and system
// (getrusage).
func SelfCPU() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
