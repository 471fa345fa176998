package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// blockTools are Debian 13's biosnoop.bt and biostacks.bt, which key
// their maps by a tuple: $key = (args.dev, args.sector); @start[$key].
const blockTools = "testdata/bpftrace-0.23-block"

// TestBlockToolsTuples checks that the two tools are as Debian ships them,
// and that each parses, checks and loads into the verifier as written.
func TestBlockToolsTuples(t *testing.T) {
	note, err := os.ReadFile(filepath.Join(blockTools, "PROVENANCE"))
	if err != nil {
		t.Fatal(err)
	}
	sums := regexp.MustCompile(`(?m)^([0-9a-f]{64})  (\S+\.bt)$`).FindAllStringSubmatch(string(note), -1)
	if len(sums) != 2 {
		t.Fatalf("PROVENANCE notes %d tools, want 2", len(sums))
	}
	for _, s := range sums {
		file := filepath.Join(blockTools, s[2])
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if got := sha256.Sum256(text); hex.EncodeToString(got[:]) != s[1] {
			t.Errorf("%s: SHA256 %x, PROVENANCE says %s: the file was changed", file, got, s[1])
		}
		code, out, errs := runCLI(t, "-d", file)
		if code != 0 {
			t.Fatalf("%s: exit %d:\n%s", file, code, errs)
		}
		for _, want := range []string{"tracepoint:block:block_io_start (TracePoint", "verifier processed"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: no %q in -d's output:\n%s", file, want, out)
			}
		}
	}
}

// TestBiosnoopRuns runs biosnoop.bt on direct writes to a file on a block
// device: its tuple-keyed maps match each request's start with its end,
// and it prints a row for the writer, as bpftrace does.
func TestBiosnoopRuns(t *testing.T) {
	dir := t.TempDir()
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		t.Fatal(err)
	}
	if major := (st.Dev >> 8) & 0xfff; major == 0 {
		t.Skipf("%s is on no block device (device %#x): no block I/O to trace", dir, st.Dev)
	}
	write := "dd if=/dev/zero of=" + filepath.Join(dir, "f") + " bs=4k count=8 oflag=direct,sync status=none"
	code, out, errs := runCLI(t, "-c", write, filepath.Join(blockTools, "biosnoop.bt"))
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, errs)
	}
	row := regexp.MustCompile(`(?m)^\d+ +\d+ +\d+ +dd +\d+ +\d+$`)
	if !row.MatchString(out) {
		t.Errorf("no row for dd in the output:\n%s", out)
	}
}
