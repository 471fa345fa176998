package codegen_test

import (
	"strings"
	"testing"

	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/runtime/kernel"
)

// TestNetfilterScanInBranch: the walk up the stack for the netfilter state
// goes inside the one branch of an if that reads hook, table or chain, so a
// drop that takes the other way does not pay for it (whydrop's rule line),
// and before the if where the condition, the other branch or a later
// statement reads them too. Each program loads.
func TestNetfilterScanInBranch(t *testing.T) {
	// The condition compares len with 777: the jump on that constant is
	// where the if begins.
	const nf = `len == 777`
	cases := []struct {
		name, body string
		inside     bool
	}{
		{"then", `printf("%d\n", 1); if (` + nf + `) { printf("%s %s\n", table, chain); }`, true},
		{"else", `if (!(` + nf + `)) { printf("no\n"); } else { printf("%s\n", chain); }`, true},
		{"nested", `if (` + nf + `) { printf("x\n"); if (mark == 1) { printf("%s\n", table); } }`, true},
		{"read after", `if (` + nf + `) { printf("%s\n", table); } printf("%s\n", chain);`, false},
		{"condition", `if (` + nf + ` && hook == 3) { printf("%s\n", table); }`, false},
		{"both branches", `if (` + nf + `) { printf("%s\n", table); } else { printf("%s\n", chain); }`, false},
		{"else if", `if (` + nf + `) { printf("none\n"); } else if (mark == 1) { printf("%s\n", table); }`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := compileArgs(t, "tracepoint:skb:kfree_skb { "+c.body+" }", nil, codegen.Options{Ksym: kernel.KsymAddr})
			load(t, out)
			insns := out.Programs[0].Prog.Instructions
			firstIf, firstScan := -1, -1
			for i, ins := range insns {
				if firstIf < 0 && ins.OpCode.JumpOp() != asm.InvalidJumpOp && ins.Constant == 777 {
					firstIf = i
				}
				if firstScan < 0 && (strings.HasPrefix(ins.Reference(), "nf_") || strings.HasPrefix(ins.Symbol(), "nf_")) {
					firstScan = i
				}
			}
			if firstIf < 0 || firstScan < 0 {
				t.Fatalf("no if (%d) or no scan (%d) in the program", firstIf, firstScan)
			}
			if inside := firstScan > firstIf; inside != c.inside {
				t.Errorf("scan at %d, first if's jump at %d: inside the branch = %v, want %v", firstScan, firstIf, inside, c.inside)
			}
		})
	}
}
