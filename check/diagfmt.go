package check

import (
	"fmt"
	"slices"

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
	if len(verbs) == 0 {
		verbs = []stdlib.Verb{{}}
	}
	verbs[0].Text = prefix + verbs[0].Text
	if last := &verbs[len(verbs)-1]; last.Conv == 0 {
		last.Text += "\n"
	} else {
		verbs = append(verbs, stdlib.Verb{Text: "\n"})
	}
	c.info.Formats[e] = verbs
}

// Where is bpftrace's place of a node in runtime messages: FILE:LINE:COL-COL.
func (info *Info) Where(n lang.Node) string {
	sp := n.Span()
	name := ""
	if info.src != nil {
		name = info.src.NameAt(sp.Start.Offset)
	}
	return fmt.Sprintf("%s:%d:%d-%d", name, sp.Start.Line, sp.Start.Col, sp.End.Col)
}
