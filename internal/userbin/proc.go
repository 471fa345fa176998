package userbin

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
)

// symbolized keeps what Symbolize found, by process and address, so that
// a value printed again after its process has ended (a map at exit) still
// names its function; at most maxSymbolized entries.
var (
	symbolizedMu sync.Mutex
	symbolized   = map[[2]uint64]string{}
)

const maxSymbolized = 1 << 14

// Symbolize names the function that holds address addr of process pid:
// the file its mappings (/proc/PID/maps) put there, and the function of
// that file's symbol tables at the address's offset in it. ok is false
// where the process is gone, the address is in no file's mapping, or no
// function of the file holds it.
func Symbolize(pid uint32, addr uint64) (name string, ok bool) {
	key := [2]uint64{uint64(pid), addr}
	symbolizedMu.Lock()
	name, ok = symbolized[key]
	symbolizedMu.Unlock()
	if ok {
		return name, true
	}
	name, ok = symbolize(pid, addr)
	if ok {
		symbolizedMu.Lock()
		if len(symbolized) >= maxSymbolized {
			clear(symbolized)
		}
		symbolized[key] = name
		symbolizedMu.Unlock()
	}
	return name, ok
}

func symbolize(pid uint32, addr uint64) (string, bool) {
	path, off, ok := mappedFile(pid, addr)
	if !ok {
		return "", false
	}
	b, err := Open(fmt.Sprintf("/proc/%d/root%s", pid, path))
	if err != nil {
		if b, err = Open(path); err != nil {
			return "", false
		}
	}
	fn, ok := b.AtOffset(off)
	return fn.Name, ok
}

// mappedFile finds the file mapping of a process that holds an address,
// and the address's offset in the file.
func mappedFile(pid uint32, addr uint64) (string, uint64, bool) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return "", 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// start-end perms offset dev inode path
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || !strings.HasPrefix(fields[5], "/") {
			continue
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		off, err3 := strconv.ParseUint(fields[2], 16, 64)
		if err1 != nil || err2 != nil || err3 != nil || addr < start || addr >= end {
			continue
		}
		return strings.Join(fields[5:], " "), addr - start + off, true
	}
	return "", 0, false
}
