package main

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// bpftrace's BPFTRACE_COLOR (its man page, ENVIRONMENT): auto, the
// default, colours diagnostics where stderr is a terminal; always and
// never say so. As bpftrace does, an error's first line (where and what)
// is red and a warning's yellow; the source line, caret and hint are not.

const (
	colorRed    = "\x1b[31m"
	colorYellow = "\x1b[33m"
	colorReset  = "\x1b[0m"
)

// diagColor says whether diagnostics are coloured; run sets it.
var diagColor bool

// setDiagColor reads BPFTRACE_COLOR for stderr; a value it does not know
// is warned about as bpftrace does, and auto taken.
func setDiagColor(stderr io.Writer) {
	v := os.Getenv("BPFTRACE_COLOR")
	switch v {
	case "always":
		diagColor = true
		return
	case "never":
		diagColor = false
		return
	case "", "auto":
	default:
		fmt.Fprintf(stderr, "skbtrace: WARNING: BPFTRACE_COLOR takes auto, always or never, not %q: auto\n", v)
	}
	diagColor = isTerminal(stderr)
}

// paintDiagnostics colours the first line of each diagnostic in text
// (lines that are not indented: the indented ones are the source, the
// caret and the hint).
func paintDiagnostics(text, color string) string {
	if !diagColor {
		return text
	}
	lines := strings.SplitAfter(text, "\n")
	for i, l := range lines {
		body := strings.TrimSuffix(l, "\n")
		if body == "" || strings.HasPrefix(body, " ") || strings.HasPrefix(body, "\t") {
			continue
		}
		lines[i] = color + body + colorReset + l[len(body):]
	}
	return strings.Join(lines, "")
}
