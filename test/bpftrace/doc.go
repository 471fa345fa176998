// Package bpftrace holds skbtrace's runtime tests of bpftrace's language,
// output and flags as data, the way bpftrace keeps its own tests/runtime:
// one file per topic under runtime/, each case a program, what runs beside
// it and the lines it must print. README.md says the format; the runner is
// runtime_test.go (go test ./test/bpftrace/).
package bpftrace
