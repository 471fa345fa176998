// Package testkit holds what several packages' tests need, declared once:
// the running kernel's BTF or a skip that says why (KernelBTF), and the
// shapes of the JSON blocks --timeline and --graph print with -f json
// (TimelineBlock, GraphBlock), which tests parse the output back into.
//
// It imports none of skbtrace's packages, so that any package's tests,
// internal ones included, may use it. Parsing, checking and compiling a
// script for a test is in its subpackage compiletest, which imports the
// compiler.
package testkit
