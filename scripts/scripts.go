// Package scripts holds the bundled tools, skbtrace scripts embedded in the
// binary: `skbtrace NAME [args]` runs one, `skbtrace --tools` lists them.
package scripts

import (
	"embed"
	"io/fs"
	"sort"
	"strings"
)

//go:embed *.st
var files embed.FS

// Tool is a bundled script.
type Tool struct {
	Name string
	// Summary is the first line of its header comment, after "NAME: ".
	Summary string
	Text    string
	// Graph is set by a header line "// output: graph": the tool's output
	// is --graph's, its prints nested per skb and CPU.
	Graph bool
}

// All returns the bundled tools, sorted by name.
func All() []Tool {
	names, _ := fs.Glob(files, "*.st")
	sort.Strings(names)
	var out []Tool
	for _, n := range names {
		if t, ok := Lookup(strings.TrimSuffix(n, ".st")); ok {
			out = append(out, t)
		}
	}
	return out
}

// Lookup finds a bundled tool by name.
func Lookup(name string) (Tool, bool) {
	if strings.ContainsAny(name, "/.") {
		return Tool{}, false
	}
	b, err := files.ReadFile(name + ".st")
	if err != nil {
		return Tool{}, false
	}
	t := Tool{Name: name, Text: string(b)}
	for _, line := range strings.Split(t.Text, "\n") {
		if s, ok := strings.CutPrefix(line, "// "+name+": "); ok && t.Summary == "" {
			t.Summary = s
		}
		if line == "// output: graph" {
			t.Graph = true
		}
	}
	return t, true
}
