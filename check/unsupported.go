package check

// unsupportedBuiltins are bpftrace's builtin values and functions that
// skbtrace does not have, with why: a script using one gets an error that
// names it, at its position, instead of "unknown name".
var unsupportedBuiltins = map[string]string{
	"ustack":    "user-space stacks are not supported: kstack is the kernel's; in a uprobe, func and probe say where it fired",
	"uaddr":     "user-space symbols are not supported: print the address with %x",
	"system":    "running commands from a probe is out of scope (bpftrace --unsafe); use -c CMD",
	"signal":    "sending signals is out of scope: skbtrace only observes",
	"override":  "changing return values is out of scope: skbtrace only observes",
	"path":      "file paths are out of scope: skbtrace traces packets",
	"reg":       "registers are not exposed: use arg0..arg5 or args.NAME",
	"sizeof":    "not yet: write the size as a number",
	"offsetof":  "not yet: write the offset as a number",
	"skboutput": "use -w FILE to write packets (pcapng), or print()",
	"unwatch":   "watchpoints are out of scope",
	"sarg0":     "stack arguments are not exposed: use args.NAME",
	"usdt_arg":  "USDT probes are out of scope",
}
