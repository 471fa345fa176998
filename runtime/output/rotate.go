package output

import (
	"fmt"
	"os"
	"slices"
	"sync"
	"time"
)

// Rotation is when a file of output is closed and the next one opened, as
// tcpdump's -C, -G and -W say it.
type Rotation struct {
	// Size is the bytes a file holds before the next record goes to a new
	// one (-C); 0: no limit.
	Size int64
	// Every is how long a file is written to before the next record goes
	// to a new one (-G); 0: no limit.
	Every time.Duration
	// Count is how many files are kept (-W), a ring: the oldest is
	// overwritten or removed when one more is opened; 0: every file.
	Count int
	// LineEnd rotates only after a whole line: text and JSON, whose
	// records are lines, where a printf may write one in pieces.
	LineEnd bool
}

// On reports whether r rotates at all.
func (r Rotation) On() bool { return r.Size > 0 || r.Every > 0 }

// A Rotator is a file of output that rotates: the pcapng sink (-w) and
// the printer (-o) write to it, and ask Due at each boundary between
// records whether to Rotate before the next. It never rotates by itself,
// so a record, a block or a map printed at exit stays whole in one file.
// Its methods are safe to call from several goroutines.
type Rotator struct {
	mu    sync.Mutex
	names fileNames
	cfg   Rotation
	f     *os.File
	// size is what was written to f; opened when f was opened.
	size   int64
	opened time.Time
	// lastNL is whether the last byte written to f was a newline (or
	// nothing was written).
	lastNL bool
	// kept are the files of the ring, oldest first; removed counts the
	// files removed from it (overwritten ones too).
	kept    []string
	removed int
	// err is why the next file could not be opened: every write after
	// fails with it.
	err error
	// now is time.Now, but for tests.
	now func() time.Time
}

// NewRotator opens the first file of output named after name (its
// numbering and, with Every, strftime conversions: rotatename.go).
func NewRotator(name string, cfg Rotation) (*Rotator, error) {
	return newRotator(name, cfg, time.Now)
}

func newRotator(name string, cfg Rotation, now func() time.Time) (*Rotator, error) {
	r := &Rotator{names: fileNames{base: name, count: cfg.Count, timed: cfg.Every > 0, sized: cfg.Size > 0}, cfg: cfg, now: now}
	if err := r.open(r.names.first(now())); err != nil {
		return nil, err
	}
	return r, nil
}

// Write writes p to the current file, whole: it never rotates.
func (r *Rotator) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return 0, r.closed()
	}
	n, err := r.f.Write(p)
	r.size += int64(n)
	if n > 0 {
		r.lastNL = p[n-1] == '\n'
	}
	return n, err
}

// Due reports whether the next record should go to a new file: the
// current one holds something, and it, with pending bytes the caller holds
// for it, has reached Size, or it was opened Every ago. With LineEnd, only
// after a whole line.
func (r *Rotator) Due(pending int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.due(int64(pending))
}

func (r *Rotator) due(pending int64) bool {
	if r.size+pending == 0 || r.cfg.LineEnd && !r.lastNL {
		return false
	}
	if r.cfg.Size > 0 && r.size+pending >= r.cfg.Size {
		return true
	}
	return r.cfg.Every > 0 && r.now().Sub(r.opened) >= r.cfg.Every
}

// RotateIfDue rotates where Due(0) says so, and reports whether it did.
func (r *Rotator) RotateIfDue() (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil || !r.due(0) {
		return false, nil
	}
	return true, r.rotate()
}

// Rotate closes the current file and opens the next.
func (r *Rotator) Rotate() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rotate()
}

func (r *Rotator) rotate() error {
	if r.f == nil {
		return r.closed()
	}
	bySize := r.cfg.Size > 0 && r.size >= r.cfg.Size
	err := r.f.Close()
	r.f = nil
	if err != nil {
		r.err = fmt.Errorf("close %s: %w", r.kept[len(r.kept)-1], err)
		return r.err
	}
	if err := r.open(r.names.next(r.now(), bySize)); err != nil {
		r.err = fmt.Errorf("rotate: %w", err)
		return r.err
	}
	return nil
}

// closed is the error of a write with no file open.
func (r *Rotator) closed() error {
	if r.err != nil {
		return r.err
	}
	return os.ErrClosed
}

// open creates the file name (truncating one the ring overwrites), and
// removes the oldest kept file past Count.
func (r *Rotator) open(name string) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	r.f, r.size, r.opened, r.lastNL = f, 0, r.now(), true
	if i := slices.Index(r.kept, name); i >= 0 {
		// Overwritten: the ring came round to it (or a time name repeats).
		r.kept = slices.Delete(r.kept, i, i+1)
		r.removed++
	}
	r.kept = append(r.kept, name)
	for r.cfg.Count > 0 && len(r.kept) > r.cfg.Count {
		if err := os.Remove(r.kept[0]); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("remove %s, past -W %d files: %w", r.kept[0], r.cfg.Count, err)
		}
		r.kept = r.kept[1:]
		r.removed++
	}
	return nil
}

// Close closes the current file.
func (r *Rotator) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}

// Files are the files kept, oldest first, and how many were removed or
// overwritten by the ring.
func (r *Rotator) Files() (kept []string, removed int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.kept), r.removed
}
