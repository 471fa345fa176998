// Package compiletest parses, checks and compiles scripts for tests,
// against the running kernel's BTF (testkit.KernelBTF: skipped without
// it): the steps a test of the checker, the code generator or the printer
// otherwise writes out again. An error in any step fails the test; a test
// that wants the error calls the step itself.
package compiletest

import (
	"testing"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/internal/testkit"
	"github.com/skbtrace/skbtrace/lang"
)

// Check parses text and checks it with opts, whose BTF is the running
// kernel's where opts leaves it nil, and prunes it to what this kernel runs
// (check.Prune): the script and Info returned are the code generator's.
func Check(tb testing.TB, text string, opts check.Options) (*lang.Script, *check.Info) {
	tb.Helper()
	if opts.BTF == nil {
		opts.BTF = testkit.KernelBTF(tb)
	}
	script, err := lang.Parse(&lang.Source{Name: "test.st", Text: text})
	if err != nil {
		tb.Fatalf("parse: %v", err)
	}
	info, err := check.Check(script, opts)
	if err == nil {
		script, info, err = check.Prune(script, info, opts)
	}
	if err != nil {
		tb.Fatalf("check: %v", err)
	}
	return script, info
}

// Compile is Check, then the code generator with copts.
func Compile(tb testing.TB, text string, opts check.Options, copts codegen.Options) (*check.Info, *codegen.Output) {
	tb.Helper()
	script, info := Check(tb, text, opts)
	out, err := codegen.Compile(script, info, copts)
	if err != nil {
		tb.Fatalf("compile: %v", err)
	}
	return info, out
}
