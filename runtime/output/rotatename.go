package output

import (
	"strconv"
	"strings"
	"time"
)

// fileNames names a rotation's files as tcpdump's MakeFilename does:
//
//   - without -W: FILE, then FILE1, FILE2, ...;
//   - with -W N: FILE0 ... FILE{N-1}, the number zero-padded to the
//     digits of N-1, then FILE0 again (the ring overwrites it);
//   - with -G and a FILE with strftime conversions (%Y%m%d-%H%M%S): the
//     time the file is opened; with -C too, numbered within that time as
//     above; with -W, the oldest removed once N are kept.
//
// Where tcpdump's -G would reopen the same name (a FILE without
// conversions), the files are numbered as -C numbers them.
type fileNames struct {
	base string
	// count is -W (0: none); timed is -G given, sized -C.
	count        int
	timed, sized bool
	// stem is the current file's name before its number; n its number.
	stem string
	n    int
	// cur is the current file's name.
	cur string
}

// timeNamed reports whether the names are strftime's of the time.
func (fn *fileNames) timeNamed() bool { return fn.timed && strings.Contains(fn.base, "%") }

// width is how many digits a file's number takes: tcpdump's
// getWflagChars, the digits of -W minus one; none for time names alone,
// which the ring removes by age.
func (fn *fileNames) width() int {
	w := 0
	if fn.timeNamed() && !fn.sized {
		return 0
	}
	for x := fn.count - 1; x > 0; x /= 10 {
		w++
	}
	return w
}

// first names the first file, opened at t.
func (fn *fileNames) first(t time.Time) string {
	fn.stem, fn.n = fn.stemAt(t), 0
	return fn.name()
}

// next names the file after the current one, opened at t; bySize is a
// rotation for -C (else for -G).
func (fn *fileNames) next(t time.Time, bySize bool) string {
	stem := fn.stemAt(t)
	switch {
	case fn.timeNamed() && !bySize && stem != fn.stem:
		fn.stem, fn.n = stem, 0
	default:
		fn.n++
		if fn.count > 0 {
			fn.n %= fn.count
		}
	}
	return fn.name()
}

func (fn *fileNames) stemAt(t time.Time) string {
	if !fn.timeNamed() {
		return fn.base
	}
	return string(appendStrftime(nil, fn.base, t))
}

// name is the current stem with its number: none for the first file
// without -W (and for time names alone), else zero-padded.
func (fn *fileNames) name() string {
	w := fn.width()
	if fn.n == 0 && w == 0 {
		fn.cur = fn.stem
		return fn.cur
	}
	num := strconv.Itoa(fn.n)
	if len(num) < w {
		num = strings.Repeat("0", w-len(num)) + num
	}
	fn.cur = fn.stem + num
	return fn.cur
}
