package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/stdlib"
)

// diagSeverity is what errorf, warnf and debugf print their text as.
var diagSeverity = map[string]string{"errorf": "ERROR", "warnf": "WARNING", "debugf": "DEBUG"}

// diagFormat makes errorf's, warnf's and debugf's format bpftrace's
// line: the call's place and the severity before the text, a newline
// after it (stdin:1:9-62: ERROR: text). The code generator then prints
// it as printf's.
func (c *checker) diagFormat(e *lang.CallExpr) {
	sev, ok := diagSeverity[e.Name]
	verbs, parsed := c.info.Formats[e]
	if !ok || !parsed {
		return
	}
	verbs = slices.Clone(verbs)
	prefix := c.info.Where(e) + ": " + sev + ": "
	suffix := "\n"
	if e.Assert {
		// bpftrace's assert is a macro of its stdlib: the error is
		// placed there, then where it was expanded from, the line and
		// the call underlined.
		prefix = assertWhere + ": ERROR: assert failed: "
		suffix = "\n" + c.info.Where(e) + ": ERROR: expanded from\n" + c.info.underlined(e)
	}
	if len(verbs) == 0 {
		verbs = []stdlib.Verb{{}}
	}
	verbs[0].Text = prefix + verbs[0].Text
	if last := &verbs[len(verbs)-1]; last.Conv == 0 {
		last.Text += suffix
	} else {
		verbs = append(verbs, stdlib.Verb{Text: suffix})
	}
	c.info.Formats[e] = verbs
}

// assertWhere is where bpftrace 0.26's assert macro fails: its stdlib's
// base.bt, which defines assert.
const assertWhere = "stdlib/base.bt:6:5-37"

// underlined is the source line of a node and, under it, ~ under the
// node's columns, as bpftrace shows a place in its messages.
func (info *Info) underlined(n lang.Node) string {
	if info.src == nil {
		return ""
	}
	sp := n.Span()
	text := info.src.Text
	start := strings.LastIndexByte(text[:sp.Start.Offset], '\n') + 1
	end := strings.IndexByte(text[sp.Start.Offset:], '\n')
	if end < 0 {
		end = len(text)
	} else {
		end += sp.Start.Offset
	}
	width := max(1, min(sp.End.Offset, end)-sp.Start.Offset)
	return text[start:end] + "\n" + strings.Repeat(" ", sp.Start.Offset-start) + strings.Repeat("~", width) + "\n"
}

// Where is bpftrace's place of a node in runtime messages: FILE:LINE:COL-COL,
// FILE "stdin" for -e's program, as bpftrace names it.
func (info *Info) Where(n lang.Node) string {
	sp := n.Span()
	name := ""
	if info.src != nil {
		name = info.src.NameAt(sp.Start.Offset)
	}
	if name == "cmdline" {
		name = "stdin"
	}
	return fmt.Sprintf("%s:%d:%d-%d", name, sp.Start.Line, sp.Start.Col, sp.End.Col)
}
