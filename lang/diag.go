package lang

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
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
		name, text = d.Src.NameAt(it.Span.Start.Offset), d.Src.Text
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
	// The line is shown escaped (control characters, NUL and bytes that
	// are not UTF-8 as \xNN), and the caret is placed by what is shown.
	// Tabs are kept in the caret line so the caret lines up in a terminal.
	at := min(max(it.Span.Start.Offset-lineStart, 0), len(line))
	width := 1
	if it.Span.End.Line == it.Span.Start.Line && it.Span.End.Offset > it.Span.Start.Offset {
		end := min(it.Span.End.Offset-lineStart, len(line))
		width = max(1, utf8.RuneCountInString(printable(line[at:end])))
	}
	fmt.Fprintf(b, "    %s\n    %s^%s\n", printable(line), padRunes(printable(line[:at])), strings.Repeat("~", width-1))
	if it.Hint != "" {
		fmt.Fprintf(b, "    hint: %s\n", it.Hint)
	}
}

// printable escapes what a terminal would not show as it is: NUL and other
// control characters but tab, DEL, and bytes that are not UTF-8.
func printable(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			fmt.Fprintf(&b, "\\x%02x", s[i])
		case r < 0x20 && r != '\t', r == 0x7f:
			fmt.Fprintf(&b, "\\x%02x", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// padRunes is one space (or tab, kept) per rune of s.
func padRunes(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '\t' {
			b.WriteByte('\t')
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()
}
