package check_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/lang"
)

// FuzzParseCheck feeds arbitrary scripts to the parser and the checker: they
// must return diagnostics, never panic, and every diagnostic must point
// inside the script.
func FuzzParseCheck(f *testing.F) {
	spec := kernelBTF(f)
	for _, dir := range []string{"../lang/testdata/parse", "testdata/bad", "testdata/good"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.st"))
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(string(b))
		}
	}
	// bpftrace 0.25-0.26's values: tuple indexes, (), struct values,
	// attributes, imports.
	f.Add(`struct P { char c; int x; } __attribute__((packed, aligned(2))); import "stdlib";
begin { $t = (1, "a", ()); print($t[1 - 1]); (); $p = (struct P *)curtask; $s = *$p; @m[1] = $s; print(@m[1].x) }`)
	f.Add(`tracepoint:sched:sched_switch { print(args); $a = args; print(($a, 1)[0]) }`)
	f.Fuzz(func(t *testing.T, text string) {
		src := &lang.Source{Name: "fuzz.st", Text: text}
		script, err := lang.Parse(src)
		if err == nil {
			_, err = check.Check(script, check.Options{BTF: spec, Params: []string{"1", "eth0"}})
		}
		if err == nil {
			return
		}
		var d *lang.Diagnostics
		if !errors.As(err, &d) {
			t.Fatalf("error is not a diagnostic: %v", err)
		}
		for _, it := range d.Items {
			// src.Text: the script and the files it imports.
			if it.Span.Start.Offset < 0 || it.Span.Start.Offset > len(src.Text) || it.Msg == "" {
				t.Fatalf("bad diagnostic %+v for %q", it, text)
			}
		}
		_ = d.Error()
	})
}

// BenchmarkCheckUnknownFunction measures the error path of a misspelt
// function name: the hint compares it with every function in BTF.
func BenchmarkCheckUnknownFunction(b *testing.B) {
	spec := kernelBTF(b)
	src := &lang.Source{Name: "b.st", Text: "kprobe:tcp_v4_rvc_handler { }"}
	for b.Loop() {
		s, _ := lang.Parse(src)
		check.Check(s, check.Options{BTF: spec})
	}
}
