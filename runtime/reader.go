package runtime

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/features"
	"github.com/cilium/ebpf/perf"
	"github.com/cilium/ebpf/ringbuf"
)

// eventReader reads records from the ring buffer or, on kernels without
// one, the perf event array.
type eventReader interface {
	// next returns the next record; done reports a flush or close.
	next() (rec []byte, done bool, err error)
	Flush() error
	Close() error
	// lost counts records the reader learned were dropped (perf's lost
	// samples); the ring buffer's are counted by the programs.
	lost() uint64
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

func (r *ringReader) next() ([]byte, bool, error) {
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
func (r *ringReader) lost() uint64 { return 0 }

type perfReader struct {
	rd      *perf.Reader
	rec     perf.Record
	dropped atomic.Uint64
}

func (r *perfReader) next() ([]byte, bool, error) {
	for {
		if err := r.rd.ReadInto(&r.rec); err != nil {
			if errors.Is(err, perf.ErrFlushed) || errors.Is(err, perf.ErrClosed) {
				return nil, true, nil
			}
			return nil, false, err
		}
		if r.rec.LostSamples > 0 {
			r.dropped.Add(r.rec.LostSamples)
			continue
		}
		return r.rec.RawSample, false, nil
	}
}

func (r *perfReader) Flush() error { return r.rd.Flush() }
func (r *perfReader) Close() error { return r.rd.Close() }
func (r *perfReader) lost() uint64 { return r.dropped.Load() }

// HaveRingBuffer reports whether the kernel has BPF ring buffers (5.8+).
func HaveRingBuffer() bool {
	return featureRingBuf() == nil
}

func featureRingBuf() error { return features.HaveMapType(ebpf.RingBuf) }
