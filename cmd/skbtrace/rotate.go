package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/skbtrace/skbtrace/runtime/output"
)

// rotateOptions are tcpdump's rotation flags, for -w and -o alike: -C
// SIZE, -G SECONDS, -W COUNT (neither bpftrace nor skbtrace used the
// letters), with long names of their own.
type rotateOptions struct {
	size    string
	seconds int
	count   int
	// rotation is what they say, once check has read them.
	rotation output.Rotation
}

// addRotateFlags adds -C, -G and -W to fs.
func addRotateFlags(fs *pflag.FlagSet, r *rotateOptions) {
	fs.StringVarP(&r.size, "rotate-size", "C", "", "with -w or -o: start a new file once one holds `SIZE` (tcpdump's -C: millions of bytes; with k, m or g, KiB, MiB or GiB); the files are FILE, FILE1, FILE2... (with -W N: FILE0 to FILE{N-1}, round again)")
	fs.IntVarP(&r.seconds, "rotate-seconds", "G", 0, "with -w or -o: start a new file every `N` seconds (tcpdump's -G: strftime conversions in FILE name each file by its time, FILE-%H%M%S; without them, numbered as -C's)")
	fs.IntVarP(&r.count, "rotate-count", "W", 0, "with -C or -G: keep the last `N` files, a ring (the oldest overwritten or removed)")
}

// check reads the flags' values into rotation; w and o are -w's and -o's
// files.
func (r *rotateOptions) check(fs *pflag.FlagSet, w, o string) error {
	if fs.Changed("rotate-size") {
		n, err := parseRotateSize(r.size)
		if err != nil {
			return err
		}
		r.rotation.Size = n
	}
	if fs.Changed("rotate-seconds") {
		if r.seconds <= 0 {
			return fmt.Errorf("-G takes a whole number of seconds above 0, not %d", r.seconds)
		}
		r.rotation.Every = time.Duration(r.seconds) * time.Second
	}
	if fs.Changed("rotate-count") {
		if r.count <= 0 {
			return fmt.Errorf("-W takes a number of files above 0, not %d", r.count)
		}
		if !r.rotation.On() {
			return fmt.Errorf("-W %d keeps a ring of files made by -C or -G: give one of them", r.count)
		}
		r.rotation.Count = r.count
	}
	switch {
	case !r.rotation.On():
	case w == "" && o == "":
		return fmt.Errorf("-C and -G rotate the files of -w FILE or -o FILE: give one")
	case w == "-" && o == "":
		return fmt.Errorf("-C and -G rotate files: -w - writes to stdout")
	}
	return nil
}

// parseRotateSize reads -C's SIZE as tcpdump does: a whole number of
// millions of bytes, or of KiB, MiB or GiB with k, m or g (kB, MiB... too).
func parseRotateSize(s string) (int64, error) {
	num := strings.TrimRightFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	unit, mul := strings.ToLower(s[len(num):]), int64(1_000_000)
	switch strings.TrimSuffix(strings.TrimSuffix(unit, "b"), "i") {
	case "":
		if unit != "" {
			mul = 1 // 100b: bytes
		}
	case "k":
		mul = 1 << 10
	case "m":
		mul = 1 << 20
	case "g":
		mul = 1 << 30
	default:
		mul = 0
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || mul == 0 || n > (1<<62)/mul {
		return 0, fmt.Errorf("-C takes a size above 0: millions of bytes as tcpdump's (-C 10), or KiB, MiB, GiB (-C 100k, -C 10m, -C 1g), not %q", s)
	}
	return n * mul, nil
}

// createOutput creates -w's or -o's file: a Rotator where -C or -G rotate
// it (lines: rotated after a whole line only), else the file alone.
func (r *rotateOptions) createOutput(name string, lines bool) (io.WriteCloser, *output.Rotator, error) {
	if !r.rotation.On() {
		f, err := os.Create(name)
		return f, nil, err
	}
	cfg := r.rotation
	cfg.LineEnd = lines
	rot, err := output.NewRotator(name, cfg)
	return rot, rot, err
}

// reportFiles names the files a rotation kept, on stderr and, in -f json,
// as a "files" record on w, as the "lost" record is written.
func (r *rotateOptions) reportFiles(flag string, rot *output.Rotator, asJSON bool, w, stderr io.Writer) {
	if rot == nil {
		return
	}
	kept, removed := rot.Files()
	gone := ""
	if removed > 0 {
		gone = fmt.Sprintf(" (%d older %s removed or overwritten by -W %d)", removed, plural(removed, "file"), r.count)
	}
	fmt.Fprintf(stderr, "skbtrace: %s wrote %d %s%s: %s\n", flag, len(kept), plural(len(kept), "file"), gone, strings.Join(kept, " "))
	if asJSON {
		b, _ := json.Marshal(map[string]any{"type": "files", "data": map[string]any{"flag": flag, "files": kept, "removed": removed}})
		w.Write(append(b, '\n'))
	}
}
