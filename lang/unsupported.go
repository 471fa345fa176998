package lang

import (
	"regexp"
	"strings"
)

// bpftrace's constructs skbtrace does not compile, recognised on the line
// a syntax error is on, so that the error names the construct and says
// what to write instead of "unexpected token".
var unsupportedConstructs = []struct {
	re        *regexp.Regexp
	msg, hint string
}{
	// bpftrace's statement imports (import "x.bpf.c"; in a probe) bring
	// in C for clang to compile.
	{regexp.MustCompile(`[{;]\s*import\s+"`), "an import inside a probe (C sources, headers and BPF objects) is not supported",
		"skbtrace compiles no C: import .bt files at the top level, on a line of their own"},
}

// unsupportedConstruct names the bpftrace construct on the line of text
// at off, if a syntax error there is one of those skbtrace lacks.
func unsupportedConstruct(text string, off int) (msg, hint string, ok bool) {
	off = min(off, len(text))
	start := strings.LastIndexByte(text[:off], '\n') + 1
	end := len(text)
	if i := strings.IndexByte(text[off:], '\n'); i >= 0 {
		end = off + i
	}
	line := text[start:end]
	if strings.HasPrefix(strings.TrimSpace(line), "config") {
		return "", "", false // config = { ... } has errors of its own
	}
	for _, c := range unsupportedConstructs {
		if c.re.MatchString(line) {
			return c.msg, c.hint, true
		}
	}
	return "", "", false
}
