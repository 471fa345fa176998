package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/skbtrace/skbtrace/internal/testkit"
)

// TestFilterWriteAndHas dumps a script with has(), --filter and -w (each a
// pass over the tree: check.Prune, passes.Filter, passes.Capture): the
// tree dumped (-d) is pruned, its skb probe has pcap(FILTER) ANDed in
// front of its own predicate and starts with capture(), and its BEGIN
// probe is as written.
func TestFilterWriteAndHas(t *testing.T) {
	testkit.KernelBTF(t)
	script := `BEGIN { printf("go\n") }
tracepoint:net:net_dev_queue /len > 10/ { if (!has("tracepoint:net:net_dev_queue")) { print(1) } else { printf("%d\n", len) } }`
	code, out, errs := runCLI(t, "-d", "--filter", "udp", "-w", filepath.Join(t.TempDir(), "w.pcapng"), "-e", script)
	if code != 0 {
		t.Fatalf("exit status %d: %s", code, errs)
	}
	tree, _, _ := strings.Cut(out, "\nprogram ")
	// The tree without positions and types, one node a line.
	tree = regexp.MustCompile(`\s+\[\d+:\d+-\d+:\d+\].*`).ReplaceAllString(tree, "")
	want := `Script
  Probe
    Spec BEGIN
    Block {}
      ExprStmt
        Call printf
          String "go\n"
  Probe
    Spec tracepoint category=net name=net_dev_queue
    Predicate
      Binary &&
        Call pcap
          String "udp"
        Paren
          Binary >
            Ident len
            Int 10
    Block {}
      ExprStmt
        Call capture
      Block {}
        ExprStmt
          Call printf
            String "%d\n"
            Ident len`
	if strings.TrimSpace(tree) != want {
		t.Errorf("dumped the tree\n%s\nwant\n%s", tree, want)
	}
}
