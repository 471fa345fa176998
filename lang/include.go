package lang

import (
	"os"
	"path/filepath"
	"strings"
)

// bpftrace passes #include, --include FILE and -I DIR to clang. skbtrace
// reads no C headers for types (BTF has them), but a header found where
// bpftrace's preprocessor would look gives its constants: each
// `#define NAME value` whose value is an expression (bpftrace's man page,
// "Preprocessor Options": #include <foo.h> then @ = FOO, with -I DIR).
// A header is looked for in the -I directories (not beside the script:
// bpftrace's clang reads the script as its own definitions.h); one not
// found is ignored, as every #include was (its types come from BTF),
// where bpftrace's clang says "file not found". Function-like macros and what
// is not an expression are left out; so are a header's conditionals,
// whose branches all count.

// maxIncludeDepth bounds headers that include headers.
const maxIncludeDepth = 16

// includeHeader reads the #defines of the header name, from the offset
// from on; quoted is #include "name".
func (p *preprocessor) includeHeader(name string, quoted bool, from int, depth int) {
	path, ok := p.findHeader(name, quoted)
	if !ok || depth > maxIncludeDepth {
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	for _, line := range joinContinued(string(b)) {
		line = strings.TrimSpace(stripLineComment(line))
		if !strings.HasPrefix(line, "#") {
			continue
		}
		name, arg, _ := strings.Cut(strings.TrimSpace(line[1:]), " ")
		arg = strings.TrimSpace(arg)
		switch name {
		case "define":
			n := identLen(arg)
			if n == 0 || !isIdentStart(arg[0]) || strings.HasPrefix(arg[n:], "(") {
				continue
			}
			if toks, ok := lexMacroValue(strings.TrimSpace(arg[n:])); ok {
				p.macros.add(&macro{name: arg[:n], from: from, toks: toks})
			}
		case "include":
			if inc, q, ok := headerName(arg); ok {
				p.includeHeader(inc, q, from, depth+1)
			}
		}
	}
}

// findHeader looks a header up as bpftrace's clang would with -I: in each
// -I directory, for <name> and "name" alike.
func (p *preprocessor) findHeader(name string, _ bool) (string, bool) {
	var dirs []string
	if filepath.IsAbs(name) {
		dirs = []string{""}
	}
	dirs = append(dirs, p.src.IncludeDirs...)
	for _, d := range dirs {
		path := filepath.Join(d, name)
		if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
			return path, true
		}
	}
	return "", false
}

// headerName splits #include's argument: <name> or "name".
func headerName(arg string) (string, bool, bool) {
	arg = strings.TrimSpace(arg)
	if len(arg) < 2 {
		return "", false, false
	}
	switch {
	case arg[0] == '<' && strings.IndexByte(arg, '>') > 1:
		return arg[1:strings.IndexByte(arg, '>')], false, true
	case arg[0] == '"' && strings.IndexByte(arg[1:], '"') > 0:
		return arg[1 : 1+strings.IndexByte(arg[1:], '"')], true, true
	}
	return "", false, false
}

// joinContinued splits text into lines, a line ending in \ joined to the
// next.
func joinContinued(text string) []string {
	var out []string
	var cur strings.Builder
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimRight(l, "\r")
		if strings.HasSuffix(l, "\\") {
			cur.WriteString(strings.TrimSuffix(l, "\\"))
			cur.WriteByte(' ')
			continue
		}
		cur.WriteString(l)
		out = append(out, cur.String())
		cur.Reset()
	}
	return out
}
