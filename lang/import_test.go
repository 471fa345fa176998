package lang

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRootImports checks bpftrace 0.26's root imports: a .bt file's and
// a directory's probes, macros and types come in, before the script's
// (the deepest import's first), each file once; errors in an imported
// file name it and its line; "stdlib" is built in.
func TestRootImports(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("lib.bt", "import \"deep.bt\";\nmacro twice(x) { x * 2 }\nstruct Lib { int a; }\nbegin { printf(\"lib\\n\") }\n")
	write("deep.bt", "#!/usr/bin/env bpftrace\nbegin { printf(\"deep\\n\") }\nimport \"lib.bt\";\n")
	write("d/one.bt", "end { printf(\"one\\n\") }\n")
	write("d/notes.txt", "not a script")
	write("main.bt", "import \"./lib.bt\";\nimport \"d\";\nimport \"stdlib\";\nimport \"lib.bt\";\nstruct Main { struct Lib l; }\nbegin { print(twice(21)) }\n")
	text, _ := os.ReadFile(filepath.Join(dir, "main.bt"))
	s, err := Parse(&Source{Name: filepath.Join(dir, "main.bt"), Text: string(text)})
	if err != nil {
		t.Fatal(err)
	}
	var probes []string
	for _, p := range s.Probes {
		probes = append(probes, s.Src.NameAt(p.At.Start.Offset)[len(dir)+1:]+":"+p.At.Start.String())
	}
	if got, want := strings.Join(probes, " "), "deep.bt:2:1 lib.bt:4:1 d/one.bt:1:1 main.bt:6:1"; got != want {
		t.Errorf("probes %s, want %s", got, want)
	}
	if len(s.Types) != 2 || s.Types[0].Name != "Lib" || s.Types[1].Name != "Main" {
		t.Errorf("types %v", s.Types)
	}
	var dump strings.Builder
	Dump(&dump, s)
	if !strings.Contains(dump.String(), "21") || strings.Contains(dump.String(), "twice") {
		t.Errorf("twice(21) not expanded:\n%s", dump.String())
	}
	for _, c := range []struct {
		files map[string]string
		err   string
	}{
		{map[string]string{"m.bt": "import \"nope.bt\";\nbegin { }"}, "m.bt:1:1: unable to find suitable path for import"},
		{map[string]string{"m.bt": "import \"bad.bt\";\nbegin { }", "bad.bt": "begin {\n  print(1 +)\n}\n"}, "bad.bt:2:"},
		{map[string]string{"m.bt": "import \"c.bt\";\nbegin { }", "c.bt": "config = { max_strlen = 8 }\nbegin { }\n"}, "invalid `config` within import c.bt"},
		{map[string]string{"m.bt": "import \"x.h\";\nbegin { }", "x.h": "struct a { int b; };"}, "importing x.h is not supported"},
		{map[string]string{"m.bt": "import \"x.txt\";\nbegin { }", "x.txt": ""}, `unknown import type: "x.txt"`},
		{map[string]string{"m.bt": "begin { } import \"l.bt\";\n", "l.bt": ""}, "expected an import at the start of a line"},
		{map[string]string{"m.bt": "import lib;\nbegin { }\n"}, "m.bt:1:1: an import names a file or directory in quotes"},
		{map[string]string{"m.bt": "begin { $a = 1; import \"x.bpf.c\"; }\n"}, "m.bt:1:17: an import inside a probe (C sources, headers and BPF objects) is not supported"},
	} {
		d := t.TempDir()
		for n, txt := range c.files {
			if err := os.WriteFile(filepath.Join(d, n), []byte(txt), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, err := Parse(&Source{Name: filepath.Join(d, "m.bt"), Text: c.files["m.bt"]})
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%v: got %v, want %q", c.files, err, c.err)
		}
	}
}
