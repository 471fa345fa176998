// Package lang holds skbtrace's front end: the lexer and participle grammar, the
// abstract syntax tree with source spans, and diagnostics that point at the script.
package lang

import "fmt"

// Pos is a position in a script: a byte offset and its 1-based line and column.
type Pos struct {
	Offset int
	Line   int
	Col    int
}

// String formats the position as LINE:COL.
func (p Pos) String() string { return fmt.Sprintf("%d:%d", p.Line, p.Col) }

// Span is the half-open source range [Start, End) a node covers.
type Span struct {
	Start Pos
	End   Pos
}

// Source is a script's text and the name it is reported under.
type Source struct {
	Name string
	Text string
}

// PosAt computes the position of a byte offset in the source.
func (s *Source) PosAt(off int) Pos {
	if off > len(s.Text) {
		off = len(s.Text)
	}
	line, col := 1, 1
	for i := 0; i < off; i++ {
		if s.Text[i] == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return Pos{Offset: off, Line: line, Col: col}
}

// Slice returns the source text a span covers.
func (s *Source) Slice(sp Span) string {
	a, b := sp.Start.Offset, sp.End.Offset
	if a < 0 || b > len(s.Text) || a > b {
		return ""
	}
	return s.Text[a:b]
}
