package codegen

import (
	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/lang"
)

// testProbe reports whether the program is a test: or bench: probe's,
// which --test and --bench run with BPF_PROG_TEST_RUN.
func (g *gen) testProbe() bool {
	k := g.spec.Spec.Kind
	return k == lang.ProbeTest || k == lang.ProbeBench
}

// testExit compiles exit([code]) in a test: or bench: probe: the program
// returns the code, which the test run hands back (a test whose code is
// not 0 failed, as bpftrace's does). No exit record is sent: nothing
// reads them while tests run, and the session goes on to the next test.
func (g *gen) testExit(c *lang.CallExpr) error {
	if len(c.Args) == 0 {
		g.emit(asm.Mov.Imm(asm.R0, 0), asm.Return())
		return nil
	}
	if code, ok := g.info.ConstInt(c.Args[0]); ok {
		g.emit(asm.Mov.Imm(asm.R0, int32(code)), asm.Return())
		return nil
	}
	if err := g.expr(c.Args[0]); err != nil {
		return err
	}
	g.vs.pop(asm.R0)
	g.emit(asm.Return())
	return nil
}
