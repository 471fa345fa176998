package session

import (
	"bytes"
	"fmt"
	"time"

	"github.com/cilium/ebpf"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/runtime/output"
)

// testPacket is what a test: or bench: program runs on: 14 zero bytes,
// an Ethernet header's worth, as bpftrace runs them (XDP's test run needs
// one).
var testPacket = make([]byte, 14)

// RunTest runs a test: program once with BPF_PROG_TEST_RUN: the code its
// exit() returned (0 where it ran to its end) and how long the run took
// as the kernel measured it.
func RunTest(prog *ebpf.Program) (code uint32, took time.Duration, err error) {
	code, took, err = prog.Benchmark(testPacket, 1, nil)
	if err != nil {
		return 0, 0, fmt.Errorf("test run: %w", err)
	}
	return code, took, nil
}

// benchTarget is how long a bench: program's last batch of runs lasts at
// least: about a millisecond, as bpftrace's batches do.
const benchTarget = time.Millisecond

// RunBench times a bench: program with BPF_PROG_TEST_RUN, in batches of
// repeated runs the kernel times, each larger than the last (tenfold, then
// twofold near the target), until one lasts benchTarget: the time of a
// run in that batch and the batch's size.
func RunBench(prog *ebpf.Program) (perRun time.Duration, runs int, err error) {
	for n := 1; ; {
		_, d, err := prog.Benchmark(testPacket, n, nil)
		if err != nil {
			return 0, 0, fmt.Errorf("bench run: %w", err)
		}
		total := d * time.Duration(n)
		if total >= benchTarget || n >= 1<<30 {
			return d, n, nil
		}
		if total*10 < benchTarget {
			n *= 10
		} else {
			n *= 2
		}
	}
}

// TestOutput reads what test: programs print, test by test: the records
// one run left in the ring buffer, formatted as the script's output is.
type TestOutput struct {
	rd     eventReader
	events []*codegen.Event
	format string
}

// NewTestOutput reads the events map of coll, whose programs out
// describes, in format (output.Formats; "" text).
func NewTestOutput(coll *ebpf.Collection, out *codegen.Output, format string) (*TestOutput, error) {
	m := coll.Maps[codegen.EventsMap]
	if m == nil {
		return &TestOutput{}, nil
	}
	rd, err := newEventReader(m, out.PerfBytes)
	if err != nil {
		return nil, err
	}
	return &TestOutput{rd: rd, events: out.Events, format: format}, nil
}

// Take returns what was printed since the last Take: every record the
// buffer holds now, formatted. No record is waited for: a test's records
// are in the buffer when its run returns.
func (t *TestOutput) Take() ([]byte, error) {
	if t.rd == nil {
		return nil, nil
	}
	var buf bytes.Buffer
	pr, err := output.New(&buf, t.events, output.Config{Format: t.format})
	if err != nil {
		return nil, err
	}
	if err := t.rd.Flush(); err != nil {
		return nil, err
	}
	err = pr.Read(t.rd)
	return buf.Bytes(), err
}

// Close closes the reader.
func (t *TestOutput) Close() {
	if t.rd != nil {
		t.rd.Close()
	}
}
