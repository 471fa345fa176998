package check

import (
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/skbtrace/skbtrace/lang"
)

// constCall records the value of a call the checker computes:
// strerror(N) and signal_name(N) of a constant N are strings.
func (c *checker) constCall(e *lang.CallExpr) {
	if c.constCall026(e) || len(e.Args) != 1 {
		return
	}
	n, ok := c.constInt(e.Args[0])
	if !ok {
		return
	}
	var v string
	switch e.Name {
	case "strerror":
		v = errnoText(n)
	case "signal_name":
		v = unix.SignalName(syscall.Signal(n))
		if v == "" {
			v = "SIG" + strconv.FormatInt(n, 10)
		}
	default:
		return
	}
	c.info.Consts[e] = Const{Str: v, IsStr: true}
}

// errnoText is strerror(3)'s text of an error number: Go's, whose table
// is glibc's, capitalised as glibc prints it.
func errnoText(n int64) string {
	if n == 0 {
		return "Success"
	}
	s := syscall.Errno(n).Error()
	if strings.HasPrefix(s, "errno ") {
		return "Unknown error " + strconv.FormatInt(n, 10)
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
