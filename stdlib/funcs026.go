package stdlib

import "github.com/skbtrace/skbtrace/lang/types"

// bpftrace 0.26's string and value functions (stdlib.md) beyond the ones
// funcs.go has held since 0.2x.
var funcs026 = []*Func{
	{Name: "strcontains", Sig: `strcontains(haystack, "needle")`, Doc: "whether the string haystack contains the string needle", Infer: func(c Call) types.Type {
		const sig = `strcontains(haystack, "needle")`
		if !arity(c, sig, 2, 2) {
			return types.Bool
		}
		if t := c.Arg(0); (t.Kind != types.String || t.Fmt == types.FmtBuf) && t.Kind != types.Invalid {
			c.Errorf(0, `e.g. strcontains(comm, "ssh")`, "strcontains searches a string, got %s", t)
		}
		if _, ok := c.ConstStr(1); !ok {
			if t := c.Arg(1); (t.Kind != types.String || t.Fmt == types.FmtBuf) && t.Kind != types.Invalid {
				c.Errorf(1, `e.g. strcontains(comm, "ssh")`, "strcontains' needle must be a string, got %s", t)
			}
		}
		return types.Bool
	}},
	{Name: "errorf", Sig: `errorf("format", args...)`, Doc: "prints as printf does, as an error with the call's place: FILE:LINE:COL-COL: ERROR: text", Stmt: true},
	{Name: "warnf", Sig: `warnf("format", args...)`, Doc: "prints as printf does, as a warning with the call's place: FILE:LINE:COL-COL: WARNING: text", Stmt: true},
	{Name: "debugf", Sig: `debugf("format", args...)`, Doc: "prints as printf does, as a debug message with the call's place: FILE:LINE:COL-COL: DEBUG: text", Stmt: true},
	commOfPid,
	constStrFunc("strerror", "strerror(errno)", "the text of an error number, as strerror(3) has it: strerror(EPERM) is \"Operation not permitted\""),
	constStrFunc("signal_name", "signal_name(signum)", "a signal's name: signal_name(9) is \"SIGKILL\""),
}

// ConstStrLen is the size of the strings strerror and signal_name make.
const ConstStrLen = 64

// constStrFunc is a function of an integer whose value is a string: the
// checker computes it where the integer is a constant, the program reads
// it from a table the compiler fills (codegen/strtable.go) where not.
func constStrFunc(name, sig, doc string) *Func {
	return &Func{Name: name, Sig: sig, Doc: doc, Infer: func(c Call) types.Type {
		if arity(c, sig, 1, 1) {
			intArg(c, 0, name)
		}
		return types.Str(ConstStrLen)
	}}
}
