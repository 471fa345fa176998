package bpftrace

import (
	"os"
	"path/filepath"
	"testing"
)

// TestUpstream runs bpftrace's own runtime cases (tests/runtime/* in
// bpftrace's tree, format as runtime/'s) with skbtrace, where
// SKBTRACE_UPSTREAM_CASES names a directory of them: bpftrace's cases
// are not kept here (README.md, "bpftrace's own cases"). skbtrace runs
// as a link named bpftrace, as bpftrace's runner runs it: its cases
// expect comm to be "bpftrace".
func TestUpstream(t *testing.T) {
	dir := os.Getenv("SKBTRACE_UPSTREAM_CASES")
	if dir == "" {
		t.Skip("SKBTRACE_UPSTREAM_CASES is not set: no directory of bpftrace's runtime cases to run")
	}
	runDir(t, dir, func(t *testing.T) string {
		bin := skbtrace(t)
		link := filepath.Join(filepath.Dir(bin), "bpftrace")
		if _, err := os.Lstat(link); err != nil {
			if err := os.Symlink(bin, link); err != nil {
				t.Fatal(err)
			}
		}
		return link
	}, "")
}

// TestUpstreamBpftrace runs the same cases with bpftrace itself
// (SKBTRACE_BPFTRACE): a case it fails is of another bpftrace version
// than the one SKBTRACE_BPFTRACE names, or needs what this host lacks.
func TestUpstreamBpftrace(t *testing.T) {
	dir, bin := os.Getenv("SKBTRACE_UPSTREAM_CASES"), os.Getenv("SKBTRACE_BPFTRACE")
	if dir == "" || bin == "" {
		t.Skip("SKBTRACE_UPSTREAM_CASES and SKBTRACE_BPFTRACE name the cases and the bpftrace to run them with")
	}
	runDir(t, dir, func(*testing.T) string { return bin }, "bpftrace")
}
