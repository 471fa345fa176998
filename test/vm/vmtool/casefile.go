package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// A case is one file of test/vm/cases: a command, the traffic sent while it
// traces, how it ends, and what its output must be. The format, a directive a
// line ("#" starts a comment):
//
//	kernels COND           the kernels it runs on (default: every kernel): 6.1 6.12,
//	                       >=5.17, !arm64, kprobe-multi ... (see below)
//	setup CMD              run before skbtrace starts (sh syntax); it must succeed
//	run CMD                the skbtrace command line (sh syntax, one command)
//	traffic CMD            sent once skbtrace says "tracing" (sh syntax) and, where
//	                       the start is progressive, once the rest is attached too
//	early                  send the traffic at the "tracing" line all the same
//	post CMD               run once skbtrace has ended (sh syntax); it must succeed
//	                       (vmtool pcapcheck reads back what -w wrote)
//	until /RE/ N           then wait until N lines of stdout match RE
//	signal INT|TERM        then send skbtrace this signal; without it, skbtrace ends by itself
//	timeout 240            seconds the whole case may take (default 180)
//
// and the assertions, each exact:
//
//	exit N                 skbtrace's exit status
//	stdout /RE/ N          N lines of stdout match RE
//	stderr /RE/ N          N lines of stderr match RE
//	funcs N F...           each function F is named by N lines of stdout (the 4th field);
//	                       "funcs N *": every function named at all is named N times
//	attached GLOB          "N functions attached" (-v) is the length of `skbtrace -l GLOB`
//	                       minus the functions skbtrace says it skipped
//
// An assertion may start with [COND] to hold only on the kernels where COND
// does, as "[6.12] stdout /x/ 1" (on the kernel run.sh calls 6.12) or
// "[>=5.17,!arm64] exit 0". COND, and a kernels line's words, are the
// conditions of cond.go: alternatives separated by blanks, each terms joined
// by commas, each a label (the -k spec: 6.1, 6.12-arm64, trixie/arm64), a
// version comparison with uname -r (>=5.17, <6.3, =6.1), an architecture
// (amd64, arm64), a feature probed in the guest (kprobe-multi, kprobes,
// drop-reasons) or btf:NAME (the kernel's BTF has NAME), maybe after ! (not).
//
// After every case the kernel's BPF objects, pinned files, kprobe events,
// kprobes and ftrace entries must be back to what they were before it.
type testCase struct {
	Name    string
	Kernels *cond // nil: every kernel
	Setup   string
	Run     string
	Traffic string
	Post    string
	// Early starts the traffic at the "tracing" line, where a progressive
	// start attaches the rest while tracing (else once all attached).
	Early   bool
	Until   *assert
	Signal  string
	Timeout time.Duration
	Asserts []assert
}

// assert is one expectation about a finished run.
type assert struct {
	Line  int
	Cond  *cond  // nil: every kernel
	Kind  string // exit, stdout, stderr, funcs, attached
	Re    *regexp.Regexp
	N     int
	Funcs []string
	Glob  string
}

func (a assert) String() string {
	k := ""
	if a.Cond != nil {
		k = "[" + a.Cond.Text + "] "
	}
	switch a.Kind {
	case "stdout", "stderr":
		return fmt.Sprintf("%s%s /%s/ %d", k, a.Kind, a.Re, a.N)
	case "funcs":
		return fmt.Sprintf("%sfuncs %d %s", k, a.N, strings.Join(a.Funcs, " "))
	case "attached":
		return fmt.Sprintf("%sattached %s", k, a.Glob)
	}
	return fmt.Sprintf("%s%s %d", k, a.Kind, a.N)
}

// runsOn reports whether the case runs on the kernel env describes.
func (c *testCase) runsOn(env *kernelEnv) (bool, error) {
	return c.Kernels.holds(env)
}

func parseCaseFile(path string) (*testCase, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c := &testCase{Name: strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)), Timeout: 180 * time.Second}
	sc := bufio.NewScanner(f)
	for ln := 1; sc.Scan(); ln++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if err := c.parseLine(ln, line); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, ln, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if c.Run == "" {
		return nil, fmt.Errorf("%s: no run line", path)
	}
	if c.Signal != "" && c.Traffic == "" {
		return nil, fmt.Errorf("%s: signal without traffic: the signal is sent after the traffic", path)
	}
	return c, nil
}

func (c *testCase) parseLine(ln int, line string) error {
	var kernel *cond
	if strings.HasPrefix(line, "[") {
		end := strings.Index(line, "]")
		if end < 0 {
			return fmt.Errorf("[COND] not closed")
		}
		k, err := parseCond(line[1:end])
		if err != nil {
			return err
		}
		kernel, line = k, strings.TrimSpace(line[end+1:])
	}
	word, rest, _ := strings.Cut(line, " ")
	rest = strings.TrimSpace(rest)
	if kernel != nil && !isAssertion(word) {
		return fmt.Errorf("[%s] applies to assertions only, not %q", kernel, word)
	}
	switch word {
	case "kernels":
		k, err := parseCond(rest)
		if err != nil {
			return fmt.Errorf("kernels: %w", err)
		}
		c.Kernels = k
	case "setup":
		c.Setup = rest
	case "run":
		c.Run = rest
	case "traffic":
		c.Traffic = rest
	case "post":
		c.Post = rest
	case "early":
		// The traffic starts at the "tracing" line, while a progressive
		// start still attaches the rest.
		c.Early = true
	case "signal":
		if rest != "INT" && rest != "TERM" {
			return fmt.Errorf("signal %q: INT or TERM", rest)
		}
		c.Signal = rest
	case "timeout":
		s, err := strconv.Atoi(rest)
		if err != nil || s <= 0 {
			return fmt.Errorf("timeout %q: seconds", rest)
		}
		c.Timeout = time.Duration(s) * time.Second
	case "until":
		a, err := parseCounted(rest)
		if err != nil {
			return fmt.Errorf("until: %w", err)
		}
		a.Kind, a.Line = "stdout", ln
		c.Until = &a
	case "exit":
		n, err := strconv.Atoi(rest)
		if err != nil {
			return fmt.Errorf("exit %q: a number", rest)
		}
		c.Asserts = append(c.Asserts, assert{Line: ln, Cond: kernel, Kind: word, N: n})
	case "stdout", "stderr":
		a, err := parseCounted(rest)
		if err != nil {
			return fmt.Errorf("%s: %w", word, err)
		}
		a.Line, a.Cond, a.Kind = ln, kernel, word
		c.Asserts = append(c.Asserts, a)
	case "funcs":
		f := strings.Fields(rest)
		n, err := strconv.Atoi(first(f))
		if err != nil || len(f) < 2 {
			return fmt.Errorf("funcs N FUNCTION...")
		}
		c.Asserts = append(c.Asserts, assert{Line: ln, Cond: kernel, Kind: word, N: n, Funcs: f[1:]})
	case "attached":
		if rest == "" {
			return fmt.Errorf("attached GLOB")
		}
		c.Asserts = append(c.Asserts, assert{Line: ln, Cond: kernel, Kind: word, Glob: rest})
	default:
		return fmt.Errorf("unknown directive %q", word)
	}
	return nil
}

func isAssertion(word string) bool {
	switch word {
	case "exit", "stdout", "stderr", "funcs", "attached":
		return true
	}
	return false
}

func first(f []string) string {
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// parseCounted parses "/RE/ N": the regular expression runs to the last slash.
func parseCounted(s string) (assert, error) {
	end := strings.LastIndex(s, "/")
	if !strings.HasPrefix(s, "/") || end == 0 {
		return assert{}, fmt.Errorf("/REGEXP/ COUNT, not %q", s)
	}
	re, err := regexp.Compile(s[1:end])
	if err != nil {
		return assert{}, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(s[end+1:]))
	if err != nil || n < 0 {
		return assert{}, fmt.Errorf("count %q after /%s/: a number", strings.TrimSpace(s[end+1:]), re)
	}
	return assert{Re: re, N: n}, nil
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
