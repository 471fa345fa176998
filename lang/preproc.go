package lang

import (
	"regexp"
	"strings"
)

// bpftrace scripts carry C preprocessor lines for the kernel headers they
// would need without BTF (#include <net/sock.h>, #ifndef BPFTRACE_HAVE_BTF).
// skbtrace takes every type from BTF, so these lines are blanked (keeping
// positions), whichever branch of a conditional they are on: both branches
// only ever hold includes in such scripts. #define is not among them: a
// macro would change the script, and it stays an error.
var preprocLine = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*(?:include|ifndef|ifdef|if|elif|else|endif|pragma)\b[^\n]*`)

// blankPreprocessor replaces the preprocessor lines of s with spaces.
func blankPreprocessor(s string) string {
	if !strings.Contains(s, "#") {
		return s
	}
	return preprocLine.ReplaceAllStringFunc(s, func(m string) string { return strings.Repeat(" ", len(m)) })
}
