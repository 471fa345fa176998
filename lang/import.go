package lang

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// bpftrace 0.26's root imports: `import "NAME";` at the top level of a
// script brings in another script's probes, macros, C types and map
// declarations (resolve_imports.cpp). NAME is looked up in the
// directory of the script that is run (the working directory for -e):
//
//   - a .bt file is imported, and the imports at its own top level with
//     it (each name once; a config block in it is an error);
//   - a directory imports each .bt file in it (one level);
//   - "stdlib" and the names under it are bpftrace's standard library,
//     which skbtrace has built in: importing them does nothing;
//   - C sources and headers (.bpf.c, .h) and BPF objects (.bpf.o), which
//     bpftrace compiles with clang or links, are an error here: skbtrace
//     compiles no C;
//   - a path writable by anyone, file or directory, is skipped, as
//     bpftrace skips it, and anything else is an error at the import.
//
// An imported file's text is appended to the script's Source, after the
// script's own, and the Source remembers each file's part: positions and
// messages in it name that file and its lines. Its probes and types are
// then put before the script's (parseImports), deepest imports first, as
// bpftrace runs an import's begin probes before those of the script that
// imports it.

// sourcePart is an imported file's text within a Source's Text.
type sourcePart struct {
	name       string
	start, end int // offsets in Text
	firstLine  int // the line of Text it starts on
	rank       int // its place among the parts: a file's imports come before it
}

// partAt is the imported part holding offset off, nil in the script's own text.
func (s *Source) partAt(off int) *sourcePart {
	for i := range s.parts {
		if p := &s.parts[i]; off >= p.start && off < p.end {
			return p
		}
	}
	return nil
}

// rankAt orders a node by the file it is in: an import's rank, or, for
// the script's own text, one past the last.
func (s *Source) rankAt(off int) int {
	if p := s.partAt(off); p != nil {
		return p.rank
	}
	return len(s.parts)
}

// rootImportRe finds `import "NAME";` at the start of a line.
var rootImportRe = regexp.MustCompile(`(?m)^[ \t]*import[ \t]+"([^"\n]*)"[ \t]*;?`)

// configBlockRe finds a config block at the start of a line.
var configBlockRe = regexp.MustCompile(`(?m)^[ \t]*config[ \t]*=[ \t]*\{`)

// stdlibImports are bpftrace's standard library's import names.
var stdlibImports = map[string]bool{"stdlib": true}

// importer resolves a script's imports into its Source.
type importer struct {
	src   *Source
	d     *Diagnostics
	dir   string
	names map[string]bool // import names done
	files map[string]bool // files imported, by absolute path
	done  map[int]int     // the import statements resolved: start and end offsets
	ranks int
}

// resolveImports appends the files src's root imports name to its Text.
// It returns the import statements it resolved (start and end offsets),
// which blankImports takes out of the text that is parsed.
func resolveImports(src *Source, d *Diagnostics) map[int]int {
	if !strings.Contains(src.Text, "import") {
		return nil
	}
	dir := "."
	if src.Name != "" && src.Name != "cmdline" && src.Name != "stdin" && src.Name != "-" {
		dir = filepath.Dir(src.Name)
	}
	im := &importer{src: src, d: d, dir: dir, names: map[string]bool{}, files: map[string]bool{}, done: map[int]int{}}
	im.imports(0, len(src.Text))
	return im.done
}

// imports resolves the root imports in Text[from:to].
func (im *importer) imports(from, to int) {
	for _, m := range rootImportRe.FindAllStringSubmatchIndex(im.src.Text[from:to], -1) {
		start := from + m[0]
		for start < from+m[1] && (im.src.Text[start] == ' ' || im.src.Text[start] == '\t') {
			start++
		}
		im.done[start] = from + m[1]
		at := Span{Start: im.src.PosAt(start), End: im.src.PosAt(from + m[1])}
		im.importName(at, im.src.Text[from+m[2]:from+m[3]])
	}
}

// importName resolves one import.
func (im *importer) importName(at Span, name string) {
	if im.names[name] {
		return
	}
	im.names[name] = true
	if name == "" {
		im.d.Add(at, `name a file or directory: import "lib.bt";`, "an import names nothing")
		return
	}
	path := name
	if !filepath.IsAbs(path) {
		path = filepath.Join(im.dir, name)
	}
	st, err := os.Stat(path)
	switch {
	case err == nil && !worldWritable(path, st):
		if st.IsDir() {
			im.importDir(at, path)
			return
		}
		im.importFile(at, path, false)
		return
	case stdlibImports[name] || strings.HasPrefix(name, "stdlib/"):
		return // built in
	case err == nil:
		im.d.Add(at, "skipped "+path+": it or its directory is writable by anyone", "unable to find suitable path for import")
		return
	}
	im.d.Add(at, "checked: "+path, "unable to find suitable path for import")
}

// importDir imports the .bt files of a directory, in name order; C and
// BPF objects in it are errors, other files are left out.
func (im *importer) importDir(at Span, dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		im.d.Add(at, "", "import error: %v", err)
		return
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	for _, e := range ents {
		if !e.IsDir() {
			im.importFile(at, filepath.Join(dir, e.Name()), true)
		}
	}
}

// importFile imports one file: a .bt script; in a directory (inDir)
// files of other kinds are left out.
func (im *importer) importFile(at Span, path string, inDir bool) {
	base := filepath.Base(path)
	switch {
	case strings.HasSuffix(base, ".bt"):
	case strings.HasSuffix(base, ".bpf.c"), strings.HasSuffix(base, ".h"), strings.HasSuffix(base, ".bpf.o"):
		im.d.Add(at, "skbtrace compiles no C and links no BPF objects: define the types in the script (struct NAME { ... }) and import .bt files",
			"importing %s is not supported", base)
		return
	case inDir:
		return
	default:
		im.d.Add(at, "import a .bt file or a directory of them", "unknown import type: %q", base)
		return
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	if im.files[abs] {
		return
	}
	im.files[abs] = true
	data, err := os.ReadFile(path)
	if err != nil {
		im.d.Add(at, "", "error reading import %q: %v", path, err)
		return
	}
	text := string(data)
	if strings.HasPrefix(text, "#!") {
		text = "//" + text[2:]
	}
	if m := configBlockRe.FindStringIndex(text); m != nil {
		im.d.Add(at, "set config in the script that imports it", "invalid `config` within import %s", base)
		return
	}
	// The part starts on a line of its own and ends with one.
	src := im.src
	if !strings.HasSuffix(src.Text, "\n") {
		src.Text += "\n"
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	src.lineStarts = nil
	firstLine := strings.Count(src.Text, "\n") + 1
	start := len(src.Text)
	src.Text += text
	src.lineStarts = nil
	i := len(src.parts)
	src.parts = append(src.parts, sourcePart{name: path, start: start, end: len(src.Text), firstLine: firstLine, rank: -1})
	im.imports(start, len(src.Text))
	// Its imports are ranked first: they finished before it.
	src.parts[i].rank = im.ranks
	im.ranks++
}

// worldWritable reports whether a path or its directory is writable by
// anyone, which bpftrace refuses to import from.
func worldWritable(path string, st os.FileInfo) bool {
	if st.Mode().Perm()&0o002 != 0 {
		return true
	}
	dst, err := os.Stat(filepath.Dir(path))
	return err == nil && dst.Mode().Perm()&0o002 != 0
}

// orderImported puts the probes and types that imported files define
// before the script's own, each file's after those of the files it
// imports.
func orderImported(s *Script) {
	if len(s.Src.parts) == 0 {
		return
	}
	rank := func(sp Span) int { return s.Src.rankAt(sp.Start.Offset) }
	sort.SliceStable(s.Probes, func(i, j int) bool { return rank(s.Probes[i].At) < rank(s.Probes[j].At) })
	sort.SliceStable(s.Types, func(i, j int) bool { return rank(s.Types[i].At) < rank(s.Types[j].At) })
}

// blankImports blanks the resolved import statements in text (the
// script's text as it is parsed; offsets kept): a path's slashes would
// otherwise read as a predicate's.
func blankImports(text string, done map[int]int) string {
	if len(done) == 0 {
		return text
	}
	b := []byte(text)
	for start, end := range done {
		for i := start; i < end && i < len(b); i++ {
			if b[i] != '\n' {
				b[i] = ' '
			}
		}
	}
	return string(b)
}
