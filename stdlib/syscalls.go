package stdlib

// SyscallName is syscall_name(n): the name of system call n on the
// architecture skbtrace runs on, "" where it has none.
func SyscallName(n int64) string { return syscallNames[n] }

// SyscallCount is one past the highest system call number known.
func SyscallCount() int {
	n := 0
	for nr := range syscallNames {
		n = max(n, int(nr)+1)
	}
	return n
}
