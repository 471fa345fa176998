package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	// The -update flag of golden files is defined there; `go test ./... -update` needs every package to accept it.
	_ "github.com/skbtrace/skbtrace/internal/golden"
)

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// TestBadScriptExitsOne checks the CLI's promise for bad input: the script's
// position, the line, a caret and a hint, on stderr, with exit status 1.
func TestBadScriptExitsOne(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "script.st")
	text := "// count by length\nBEGIN { printf(\"go\\n\") }\nskb:* { print(lenn) }\n"
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, file)
	if code != 1 {
		t.Fatalf("exit status %d, want 1", code)
	}
	if out != "" {
		t.Errorf("stdout should be empty, got %q", out)
	}
	want := file + ":3:15: unknown field \"lenn\" of struct sk_buff\n" +
		"    skb:* { print(lenn) }\n" +
		"                  ^~~~\n" +
		"    hint: did you mean len?\n"
	if errs != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", errs, want)
	}
}

// TestDumpPrintsTypedTree checks -d: the tree with the checker's types,
// and the programs of the backend that tracing would use (here the one
// --backend names: skb: on tracepoints, tp_btf programs).
func TestDumpPrintsTypedTree(t *testing.T) {
	code, out, errs := runCLI(t, "-d", "--backend", "tracepoint", "-e", "skb:* /mark==0xdeadbeef/ < print(len, dev) >")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"Block <>",
		"Ident mark  [1:8-1:12]  : u32; builtin mark",
		"Int 3735928559",
		"Ident dev  [1:39-1:42]  : string[16]; builtin dev",
		"program p0_0_tp0: skb:* (Tracing, ",
		"Call FnRingbufOutput",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("-d output lacks %q:\n%s", want, out)
		}
	}
}

// TestDumpFollowsBackend checks that -d prints the programs of the backend
// --backend names: kprobes for --backend kprobe, even on a kernel without
// them (then with the reason it would not trace), tp_btf programs for
// tracepoint.
func TestDumpFollowsBackend(t *testing.T) {
	for backend, want := range map[string]string{"kprobe": "program p0_0_skb0: skb:* (Kprobe, ", "tracepoint": "program p0_0_tp0: skb:* (Tracing, "} {
		code, out, errs := runCLI(t, "-d", "--backend", backend, "--filter", "udp dst port 9", "-w", filepath.Join(t.TempDir(), "x.pcapng"))
		if code != 0 || !strings.Contains(out, want) || !strings.Contains(out, "verifier processed") {
			t.Errorf("--backend %s -d: exit %d, want %q, verified:\n%s", backend, code, want, errs)
		}
		if strings.Contains(errs, "would not trace") && !strings.Contains(errs, "--backend "+backend+": ") {
			t.Errorf("--backend %s -d: no reason why it would not trace:\n%s", backend, errs)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		code int
		err  string
	}{
		{nil, 1, "usage:"},
		{[]string{"-f", "yaml", "-e", "BEGIN {}"}, 1, `-f takes text or json, not "yaml"`},
		{[]string{"no-such-tool"}, 1, `no script file or bundled tool named "no-such-tool"`},
		{[]string{"--bogus"}, 1, "unknown flag: --bogus"},
		{[]string{"-e", "skb:* { print(len) "}, 1, "cmdline:1:19: syntax error: unexpected end of script"},
	}
	for _, tt := range tests {
		code, _, errs := runCLI(t, tt.args...)
		if code != tt.code || !strings.Contains(errs, tt.err) {
			t.Errorf("skbtrace %q: exit %d, stderr %q; want exit %d and %q", tt.args, code, errs, tt.code, tt.err)
		}
	}
}

func TestVersionAndHelp(t *testing.T) {
	if code, out, _ := runCLI(t, "--version"); code != 0 || !strings.HasPrefix(out, "skbtrace ") {
		t.Errorf("--version: %d %q", code, out)
	}
	if code, _, errs := runCLI(t, "-h"); code != 0 || !strings.Contains(errs, "-e, --expr PROGRAM") {
		t.Errorf("-h: %d %q", code, errs)
	}
}

// TestShebangScript runs a script file whose first line is a shebang, with
// positional parameters.
func TestShebangScript(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tool.st")
	text := "#!/usr/bin/env skbtrace\nskb:* /len > $1 && dev == $2/ { print(len) }\n"
	if err := os.WriteFile(file, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	_, out, _ := runCLI(t, "-d", file, "100", "eth0")
	if !strings.Contains(out, "Param $1  [2:14-2:16]  : s64; const 100") || !strings.Contains(out, `const "eth0"`) {
		t.Errorf("parameters not bound:\n%s", out)
	}
}

// TestDumpPrintsCode checks that -d prints each program's instructions and
// the verifier's count from loading it into the running kernel.
func TestDumpPrintsCode(t *testing.T) {
	code, out, errs := runCLI(t, "-d", "-e", "tracepoint:skb:kfree_skb { @[reason] = count() }")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"program p0_0: tracepoint:skb:kfree_skb (Tracing, ", "verifier processed ", "Call FnMapLookupElem", "Exit"} {
		if !strings.Contains(out, want) {
			t.Errorf("-d output lacks %q:\n%s", want, out)
		}
	}
}
