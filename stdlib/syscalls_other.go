//go:build !(linux && (amd64 || arm64))

package stdlib

// syscallNames is empty where skbtrace has no table of the
// architecture's system calls: syscall_name gives "".
var syscallNames = map[int64]string{}
