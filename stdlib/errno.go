package stdlib

import (
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/skbtrace/skbtrace/lang/types"
)

// errnoConsts are the error numbers by their C names (EPERM, ENOENT...), as
// a bpftrace script has them through #include <errno.h> or --include
// errno.h: skbtrace reads no headers, so they are always defined.
var errnoConsts = func() map[string]*Const {
	m := map[string]*Const{}
	for n := 1; n < 4096; n++ {
		if name := unix.ErrnoName(syscall.Errno(n)); name != "" {
			m[name] = &Const{Name: name, Value: uint64(n), Type: types.S64}
		}
	}
	return m
}()
