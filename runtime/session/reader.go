package session

import (
	"errors"
	"fmt"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/perf"
	"github.com/cilium/ebpf/ringbuf"

	"github.com/skbtrace/skbtrace/runtime/output"
)

// eventReader reads records from the ring buffer or, on kernels without
// one, the perf event array.
type eventReader interface {
	// Next, Pending and SetDeadline are what the printer reads.
	output.Reader
	Flush() error
	Close() error
}

func newEventReader(m *ebpf.Map, perfBytes int) (eventReader, error) {
	if m.Type() == ebpf.PerfEventArray {
		rd, err := perf.NewReader(m, perfBytes)
		if err != nil {
			return nil, fmt.Errorf("open the perf buffer: %w", err)
		}
		return &perfReader{rd: rd}, nil
	}
	rd, err := ringbuf.NewReader(m)
	if err != nil {
		return nil, fmt.Errorf("open the ring buffer: %w", err)
	}
	return &ringReader{rd: rd}, nil
}

type ringReader struct {
	rd  *ringbuf.Reader
	rec ringbuf.Record
}

func (r *ringReader) Next() ([]byte, bool, error) {
	if err := r.rd.ReadInto(&r.rec); err != nil {
		if errors.Is(err, ringbuf.ErrFlushed) || errors.Is(err, ringbuf.ErrClosed) {
			return nil, true, nil
		}
		return nil, false, err
	}
	return r.rec.RawSample, false, nil
}

func (r *ringReader) Flush() error { return r.rd.Flush() }
func (r *ringReader) Close() error { return r.rd.Close() }

type perfReader struct {
	rd  *perf.Reader
	rec perf.Record
}

func (r *perfReader) Next() ([]byte, bool, error) {
	for {
		if err := r.rd.ReadInto(&r.rec); err != nil {
			if errors.Is(err, perf.ErrFlushed) || errors.Is(err, perf.ErrClosed) {
				return nil, true, nil
			}
			return nil, false, err
		}
		if r.rec.LostSamples > 0 {
			// The programs count each record bpf_perf_event_output had
			// no room for; perf's lost records count the same ones again
			// (and only once there is room to say so).
			continue
		}
		return r.rec.RawSample, false, nil
	}
}

func (r *perfReader) Flush() error { return r.rd.Flush() }
func (r *perfReader) Close() error { return r.rd.Close() }

func (r *ringReader) Pending() bool { return r.rd.AvailableBytes() > 0 }

func (r *ringReader) SetDeadline(t time.Time) { r.rd.SetDeadline(t) }
func (r *perfReader) SetDeadline(t time.Time) { r.rd.SetDeadline(t) }

// pending is whether the CPU buffer last read has more: when it has not,
// the printer writes out, once per CPU buffer drained at worst.
func (r *perfReader) Pending() bool { return r.rec.Remaining > 0 }
