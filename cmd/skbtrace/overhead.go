package main

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/runtime/metrics"
	"github.com/skbtrace/skbtrace/runtime/session"
)

// overheadOptions are the flags that bound skbtrace's cost: --sample,
// --max-rate and --max-overhead.
type overheadOptions struct {
	sample, maxRate int
	maxOverhead     float64
}

func addOverheadFlags(fs *pflag.FlagSet, o *overheadOptions) {
	fs.IntVar(&o.sample, "sample", 0, "keep one packet in `N`, decided at its first event: all its hops or none (skb probes; counted at exit)")
	fs.IntVar(&o.maxRate, "max-rate", 0, "let at most `N` events a second through on each CPU, in the programs; the others are counted at exit")
	fs.Float64Var(&o.maxOverhead, "max-overhead", 0, "when the programs take more than `PCT` percent of the CPUs (their run time, measured each second), sample harder (one packet in twice as many), or detach where sampling cannot go further")
}

// maxSampleN is as hard as --max-overhead samples before it detaches.
const maxSampleN = 1 << 20

// check says what is wrong with the flags' values.
func (o overheadOptions) check() error {
	switch {
	case o.sample < 0 || o.sample > maxSampleN:
		return fmt.Errorf("--sample takes a number of packets from 1 to %d (one in N is kept), not %d", maxSampleN, o.sample)
	case o.maxRate < 0 || o.maxRate > codegen.MaxRateLimit:
		return fmt.Errorf("--max-rate takes a number of events a second from 1 to %d, not %d", codegen.MaxRateLimit, o.maxRate)
	case o.maxOverhead < 0 || o.maxOverhead > 100:
		return fmt.Errorf("--max-overhead takes a percentage of the CPUs above 0 and at most 100, not %g", o.maxOverhead)
	}
	return nil
}

// sampleN is codegen.Options.Sample: --sample's N, or 1 where only
// --max-overhead asks for the gate (to sample harder later).
func (o overheadOptions) sampleN() uint32 {
	if o.sample == 0 && o.maxOverhead > 0 {
		return 1
	}
	return uint32(o.sample)
}

// overheadInterval is how often the budget is checked and -v reports.
const overheadInterval = time.Second

// overheadWatch measures skbtrace's cost while tracing: its own CPU time
// and its programs' run time (with BPF run-time stats on for the run),
// said every interval under -v and served as metrics, and acted on with
// --max-overhead.
type overheadWatch struct {
	o       overheadOptions
	verbose bool
	sess    *session.Session
	stderr  io.Writer
	// detach ends tracing, as Ctrl-C does.
	detach func()
	stats  io.Closer
	// statsOn says program run times are counted.
	statsOn bool
	cpus    int
	quit    chan struct{}
	done    sync.WaitGroup
	// detached says --max-overhead ended tracing.
	detached bool
}

// startOverhead starts the watch where -v, --metrics or --max-overhead
// wants it; its stop ends it (and the BPF stats it turned on).
func startOverhead(o options, sess *session.Session, msrv *metrics.Server, stderr io.Writer, detach func()) (*overheadWatch, error) {
	w := &overheadWatch{o: o.overhead, verbose: o.verbose, sess: sess, stderr: stderr, detach: detach, cpus: runtime.NumCPU(), quit: make(chan struct{})}
	// The summary and the metrics of what skbtrace missed count what
	// the gates left out too.
	sess.AddMisses(sess.OverheadMisses)
	if ov, err := sess.Overhead(); err == nil && !ov.Sampling && o.overhead.sample > 0 {
		fmt.Fprintln(stderr, "skbtrace: --sample: no probe of the script has an skb: nothing is sampled")
	}
	if !o.verbose && o.metrics == "" && o.overhead.maxOverhead == 0 {
		return w, nil
	}
	var err error
	w.stats, w.statsOn, err = session.EnableRunTimeStats()
	switch {
	case err != nil && o.overhead.maxOverhead > 0:
		return nil, fmt.Errorf("--max-overhead: %w (Linux 5.8 or later)", err)
	case err != nil:
		fmt.Fprintf(stderr, "skbtrace: the programs' run time is not reported: %v\n", err)
	}
	if msrv != nil {
		mo := metrics.Overhead{Gates: sess.Overhead}
		if w.statsOn {
			mo.ProgramTime = sess.ProgramTime
		}
		if err := msrv.RegisterOverhead(mo); err != nil {
			return nil, fmt.Errorf("--metrics: %w", err)
		}
	}
	if !o.verbose && o.overhead.maxOverhead == 0 {
		return w, nil
	}
	w.done.Add(1)
	go w.loop()
	return w, nil
}

// loop checks the cost every interval until stop.
func (w *overheadWatch) loop() {
	defer w.done.Done()
	t := time.NewTicker(overheadInterval)
	defer t.Stop()
	last, lastAt, lastCPU := w.sess.ProgramTime(), time.Now(), session.SelfCPU()
	for {
		select {
		case <-w.quit:
			return
		case <-t.C:
		}
		pt, at, cpu := w.sess.ProgramTime(), time.Now(), session.SelfCPU()
		share := 100 * float64(pt.Run-last.Run) / (float64(at.Sub(lastAt)) * float64(w.cpus))
		if w.verbose {
			fmt.Fprintf(w.stderr, "skbtrace: overhead: skbtrace %s CPU (+%s), its programs %s in %d runs (+%s, %.3f%% of %d CPUs)%s\n",
				round(cpu), round(cpu-lastCPU), round(pt.Run), pt.Runs, round(pt.Run-last.Run), share, w.cpus, w.gates())
		}
		last, lastAt, lastCPU = pt, at, cpu
		if w.o.maxOverhead > 0 && share > w.o.maxOverhead && w.overBudget(share) {
			return
		}
	}
}

// overBudget samples harder or detaches, and says which; true once
// detached.
func (w *overheadWatch) overBudget(share float64) bool {
	ov, err := w.sess.Overhead()
	said := fmt.Sprintf("skbtrace: --max-overhead %g%%: the programs took %.2f%% of %d CPUs in the last %s", w.o.maxOverhead, share, w.cpus, overheadInterval)
	if err == nil && ov.Sampling && ov.SampleN < maxSampleN {
		n := max(ov.SampleN, 1) * 2
		if err := w.sess.SetSample(n); err == nil {
			fmt.Fprintf(w.stderr, "%s; sampling harder: one packet in %d\n", said, n)
			return false
		}
	}
	why := "no probe has an skb to sample"
	if ov.Sampling {
		why = fmt.Sprintf("sampling one packet in %d already", ov.SampleN)
	}
	fmt.Fprintf(w.stderr, "%s (%s); detaching\n", said, why)
	w.detached = true
	w.detach()
	return true
}

// gates says the gates' counts for -v's line.
func (w *overheadWatch) gates() string {
	ov, err := w.sess.Overhead()
	if err != nil || !ov.Gated {
		return ""
	}
	s := ""
	if ov.Sampling {
		s += fmt.Sprintf("; --sample 1 in %d: %d skbs kept, %d left out (%d events)", ov.SampleN, ov.KeptPackets, ov.SampledPackets, ov.SampledEvents)
	}
	if w.o.maxRate > 0 {
		s += fmt.Sprintf("; --max-rate %d: %d events capped", w.o.maxRate, ov.CappedEvents)
	}
	return s
}

// stop ends the loop; the BPF stats stay on until close, so that the
// summary still reads the run time.
func (w *overheadWatch) stop() {
	select {
	case <-w.quit:
	default:
		close(w.quit)
	}
	w.done.Wait()
}

// close turns the BPF run-time stats off again, if the watch turned them on.
func (w *overheadWatch) close() {
	w.stop()
	if w.stats != nil {
		w.stats.Close()
	}
}

// summary says at exit what the gates left out, and skbtrace's cost: on
// stderr, and with -f json as one object on w.
func (w *overheadWatch) summary(stderr, jsonOut io.Writer) {
	ov, err := w.sess.Overhead()
	if err != nil {
		fmt.Fprintf(stderr, "skbtrace: %v\n", err)
		return
	}
	pt, cpu := w.sess.ProgramTime(), session.SelfCPU()
	// The events left out are in the misses' summary (sampled out,
	// capped); the packets are said here.
	if ov.Sampling && (w.o.sample > 0 || ov.SampleN > 1) {
		fmt.Fprintf(stderr, "skbtrace: --sample: %d %s kept, %d left out, one in %d at the end\n", ov.KeptPackets, plural(int(ov.KeptPackets), "packet"), ov.SampledPackets, ov.SampleN)
	}
	if w.statsOn && w.verbose {
		fmt.Fprintf(stderr, "skbtrace: overhead: skbtrace %s CPU, its programs %s in %d runs\n", round(cpu), round(pt.Run), pt.Runs)
	}
	if jsonOut == nil || (!ov.Gated && !w.statsOn) {
		return
	}
	data := map[string]any{"cpu_seconds": cpu.Seconds()}
	if w.statsOn {
		data["program_run_seconds"], data["program_runs"] = pt.Run.Seconds(), pt.Runs
	}
	if ov.Sampling {
		data["sample"], data["sampled_out_events"], data["sampled_out_packets"], data["kept_packets"] = ov.SampleN, ov.SampledEvents, ov.SampledPackets, ov.KeptPackets
	}
	if w.o.maxRate > 0 {
		data["max_rate"], data["capped_events"] = w.o.maxRate, ov.CappedEvents
	}
	if w.detached {
		data["detached"] = true
	}
	b, _ := json.Marshal(map[string]any{"type": "overhead", "data": data})
	fmt.Fprintf(jsonOut, "%s\n", b)
}

// round shortens a duration for a line.
func round(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}
