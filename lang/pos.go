// Package lang holds skbtrace's front end: the lexer and participle grammar (and
// descent, the parser that follows the grammar without reflection), the
// abstract syntax tree with source spans, and diagnostics that point at the script.
package lang

import (
	"fmt"
	"sort"
)

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
	// Params are the positional parameters: a probe may name them, as
	// bpftrace allows (interval:s:$1, kprobe:$1); they stand there as text.
	Params []string
	// IncludeDirs are -I's directories and Includes --include's files:
	// where #include finds the headers whose #defines it reads
	// (include.go).
	IncludeDirs, Includes []string
	// lineStarts holds the offset of each line's first byte, built on the
	// first PosAt: positions are then a binary search, not a scan.
	lineStarts []int
	// parts are the files a script imports (import.go), appended to Text
	// after the script's own: positions in them are their files' lines.
	parts []sourcePart
}

// PosAt computes the position of a byte offset in the source.
func (s *Source) PosAt(off int) Pos {
	if off > len(s.Text) {
		off = len(s.Text)
	}
	if s.lineStarts == nil {
		s.lineStarts = []int{0}
		for i := 0; i < len(s.Text); i++ {
			if s.Text[i] == '\n' {
				s.lineStarts = append(s.lineStarts, i+1)
			}
		}
	}
	// The last line starting at or before off.
	line := sort.SearchInts(s.lineStarts, off+1) - 1
	p := Pos{Offset: off, Line: line + 1, Col: off - s.lineStarts[line] + 1}
	if part := s.partAt(off); part != nil {
		p.Line -= part.firstLine - 1
	}
	return p
}

// NameAt is the name of the file the byte at offset off comes from: the
// script's, or a file it imports.
func (s *Source) NameAt(off int) string {
	if part := s.partAt(off); part != nil {
		return part.name
	}
	return s.Name
}

// Slice returns the source text a span covers.
func (s *Source) Slice(sp Span) string {
	a, b := sp.Start.Offset, sp.End.Offset
	if a < 0 || b > len(s.Text) || a > b {
		return ""
	}
	return s.Text[a:b]
}
