package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/runtime/pipeline"
	"github.com/skbtrace/skbtrace/runtime/session"
	"github.com/skbtrace/skbtrace/scripts"
)

// bpftrace's -d STAGE (its man page, "Debug Output") and skbtrace's own
// -d live on one flag: -d alone (or before a script or -e) is skbtrace's
// dump, which prints the checked tree and every program's instructions
// and exits; -d STAGE[,STAGE...] with bpftrace's stage names prints those
// stages and then runs the script, as bpftrace does. skbtrace has no LLVM
// and no libbpf, so codegen, codegen-opt and dis print the eBPF
// instructions it generates, and libbpf says there is no such log.

// dumpAll is the value of a bare -d: skbtrace's dump.
const dumpAll = "skbtrace"

// debugStageNames are bpftrace 0.26's -d stages (parse and dis are its
// debug build's).
var debugStageNames = []string{"all", "ast", "parse", "types", "codegen", "codegen-opt", "dis", "libbpf", "verifier"}

// isDebugStages says whether v is a comma-separated list of -d stages.
func isDebugStages(v string) bool {
	for _, s := range strings.Split(v, ",") {
		if !slices.Contains(debugStageNames, s) {
			return false
		}
	}
	return v != ""
}

// joinDebugStage makes bpftrace's `-d STAGE` and `--debug STAGE` one
// argument (-d=STAGE), so that a bare -d stays skbtrace's dump: the word
// after -d is taken as its value only where it names stages.
func joinDebugStage(argv []string) []string {
	out := make([]string, 0, len(argv))
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		if a == "--" {
			return append(out, argv[i:]...)
		}
		if v, ok := strings.CutPrefix(a, "--debug="); ok {
			out = append(out, "--dump="+v)
			continue
		}
		if (a == "-d" || a == "--debug" || a == "--dump") && i+1 < len(argv) && stageWord(argv[i+1]) {
			out = append(out, "--dump="+argv[i+1])
			i++
			continue
		}
		if a == "--debug" {
			a = "--dump"
		}
		out = append(out, a)
	}
	return out
}

// stageWord says whether the word after -d is its value: stages, or a
// word that is no flag, file or bundled tool (bpftrace's `-d bogus` is an
// error that names it, not a script called bogus).
func stageWord(w string) bool {
	if isDebugStages(w) {
		return true
	}
	if w == "" || strings.HasPrefix(w, "-") || strings.ContainsAny(w, "/. ") {
		return false
	}
	if _, err := os.Stat(w); err == nil {
		return false
	}
	_, tool := scripts.Lookup(w)
	return !tool
}

// debugStages are the stages -d asked for; nil for none or skbtrace's dump.
type debugStages map[string]bool

// parseDebugStages reads -d's value: bpftrace's error for a stage it does
// not have ("invalid option for -d: bogus").
func parseDebugStages(v string) (debugStages, error) {
	if v == "" || v == dumpAll {
		return nil, nil
	}
	st := debugStages{}
	for _, s := range strings.Split(v, ",") {
		if !slices.Contains(debugStageNames, s) {
			return nil, fmt.Errorf("invalid option for -d: %s (stages: %s; -d alone prints skbtrace's tree and instructions and exits)", s, strings.Join(debugStageNames, ", "))
		}
		st[s] = true
	}
	return st, nil
}

func (d debugStages) has(names ...string) bool {
	if d["all"] {
		return len(d) > 0
	}
	for _, n := range names {
		if d[n] {
			return true
		}
	}
	return false
}

// printTree prints the stages of the checked tree: ast and parse the tree
// as parsed and lowered, types with each expression's type.
func (d debugStages) printTree(plan *pipeline.Plan, w io.Writer) {
	if d.has("ast", "parse") {
		fmt.Fprintf(w, "AST\n-------------------\n")
		lang.Dump(w, plan.Script)
		fmt.Fprintln(w)
	}
	if d.has("types") {
		fmt.Fprintf(w, "AST with types\n-------------------\n")
		lang.DumpWith(w, plan.Script, plan.Info.Describe)
		fmt.Fprintln(w)
	}
}

// printCode prints the stages of the compiled programs: their
// instructions, and the verifier's log of each.
func (d debugStages) printCode(plan *pipeline.Plan, w, stderr io.Writer) {
	if d.has("codegen", "codegen-opt", "dis") {
		for _, p := range plan.Output.Programs {
			what := p.Name
			if p.Spec != nil {
				what = p.Spec.Spec.Text
			}
			fmt.Fprintf(w, "program %s: %s (%s, %d instructions)\n%v\n", p.Name, what, p.Prog.Type, len(p.Prog.Instructions), p.Prog.Instructions)
		}
	}
	if d.has("libbpf") {
		fmt.Fprintln(stderr, "skbtrace: -d libbpf: skbtrace loads its programs with cilium/ebpf, not libbpf: there is no libbpf log (-d verifier prints the kernel's)")
	}
	if d.has("verifier") {
		for _, l := range session.VerifierLogs(plan.Output) {
			fmt.Fprintf(w, "BPF verifier log for %s:\n--------------------------------------\n%s", l.Name, l.Log)
			if l.Err != nil {
				fmt.Fprintf(w, "(not loaded: %v)\n", l.Err)
			}
			fmt.Fprintln(w)
		}
	}
}
