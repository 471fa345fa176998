package lang

import (
	"fmt"
	"sort"
	"strings"
)

// Diagnostic is one error found in a script, with the span it is about and an
// optional hint that tells the user how to fix it.
type Diagnostic struct {
	Span Span
	Msg  string
	Hint string
}

// Diagnostics is every error found in one script.
type Diagnostics struct {
	Src   *Source
	Items []Diagnostic
	// eofHint says which bracket is still open at the end of the script.
	eofHint string
}

// Add records an error at a span.
func (d *Diagnostics) Add(sp Span, hint string, format string, args ...any) {
	d.Items = append(d.Items, Diagnostic{Span: sp, Msg: fmt.Sprintf(format, args...), Hint: hint})
}

// Len reports how many errors were recorded.
func (d *Diagnostics) Len() int { return len(d.Items) }

// Err returns the diagnostics as an error, or nil when there are none.
func (d *Diagnostics) Err() error {
	if d == nil || len(d.Items) == 0 {
		return nil
	}
	d.sort()
	return d
}

func (d *Diagnostics) sort() {
	sort.SliceStable(d.Items, func(i, j int) bool {
		return d.Items[i].Span.Start.Offset < d.Items[j].Span.Start.Offset
	})
}

// Error formats every diagnostic: FILE:LINE:COL: message, the source line, a
// caret under the span, and the hint.
func (d *Diagnostics) Error() string {
	d.sort()
	var b strings.Builder
	for i, it := range d.Items {
		if i > 0 {
			b.WriteByte('\n')
		}
		d.format(&b, it)
	}
	return b.String()
}

func (d *Diagnostics) format(b *strings.Builder, it Diagnostic) {
	name := "script"
	text := ""
	if d.Src != nil {
		name, text = d.Src.Name, d.Src.Text
	}
	fmt.Fprintf(b, "%s:%d:%d: %s\n", name, it.Span.Start.Line, it.Span.Start.Col, it.Msg)
	lineStart := it.Span.Start.Offset - (it.Span.Start.Col - 1)
	if lineStart < 0 || lineStart > len(text) {
		return
	}
	lineEnd := strings.IndexByte(text[lineStart:], '\n')
	if lineEnd < 0 {
		lineEnd = len(text)
	} else {
		lineEnd += lineStart
	}
	line := text[lineStart:lineEnd]
	// Tabs are kept in the caret line so the caret lines up in a terminal.
	pad := make([]byte, 0, it.Span.Start.Col)
	for i := 0; i < it.Span.Start.Col-1 && i < len(line); i++ {
		if line[i] == '\t' {
			pad = append(pad, '\t')
		} else {
			pad = append(pad, ' ')
		}
	}
	width := 1
	if it.Span.End.Line == it.Span.Start.Line && it.Span.End.Col > it.Span.Start.Col {
		width = it.Span.End.Col - it.Span.Start.Col
	}
	fmt.Fprintf(b, "    %s\n    %s^%s\n", line, pad, strings.Repeat("~", width-1))
	if it.Hint != "" {
		fmt.Fprintf(b, "    hint: %s\n", it.Hint)
	}
}
