package main

import (
	"bytes"
	"io"
	"sync"
)

// heldWriter keeps what a bpftrace program's begin probes print until the
// "Attached N probes" line (and __BPFTRACE_NOTIFY_PROBES_ATTACHED) is out:
// bpftrace runs begin once every probe is attached and said so, and its
// tests read begin's output after that line (`begin { printf("%s",
// probe) } end { ... }` is one line, "begin-end").
type heldWriter struct {
	mu   sync.Mutex
	w    io.Writer
	held bytes.Buffer
	open bool
}

func newHeldWriter(w io.Writer) *heldWriter { return &heldWriter{w: w} }

func (h *heldWriter) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.open {
		return h.w.Write(p)
	}
	return h.held.Write(p)
}

// release writes what was held and lets later writes through.
func (h *heldWriter) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.open {
		return
	}
	h.open = true
	if h.held.Len() > 0 {
		h.w.Write(h.held.Bytes())
		h.held.Reset()
	}
}
