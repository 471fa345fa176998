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
//	kernels 6.1 6.12       the kernels it runs on (default: every kernel)
//	setup CMD              run before skbtrace starts (sh syntax); it must succeed
//	run CMD                the skbtrace command line (sh syntax, one command)
//	traffic CMD            sent once skbtrace says "tracing" (sh syntax)
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
// An assertion may start with [KERNEL] to hold on that kernel only. After every
// case the kernel's BPF objects, pinned files, kprobe events, kprobes and ftrace
// entries must be back to what they were before it.
type testCase struct {
	Name    string
	Kernels []string
	Setup   string
	Run     string
	Traffic string
	Until   *assert
	Signal  string
	Timeout time.Duration
	Asserts []assert
}

// assert is one expectation about a finished run.
type assert struct {
	Line   int
	Kernel string // empty: every kernel
	Kind   string // exit, stdout, stderr, funcs, attached
	Re     *regexp.Regexp
	N      int
	Funcs  []string
	Glob   string
}

func (a assert) String() string {
	k := ""
	if a.Kernel != "" {
		k = "[" + a.Kernel + "] "
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

// runsOn reports whether the case runs on kernel kv.
func (c *testCase) runsOn(kv string) bool {
	if len(c.Kernels) == 0 {
		return true
	}
	for _, k := range c.Kernels {
		if k == kv {
			return true
		}
	}
	return false
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
	kernel := ""
	if strings.HasPrefix(line, "[") {
		end := strings.Index(line, "]")
		if end < 0 {
			return fmt.Errorf("[KERNEL] not closed")
		}
		kernel, line = line[1:end], strings.TrimSpace(line[end+1:])
	}
	word, rest, _ := strings.Cut(line, " ")
	rest = strings.TrimSpace(rest)
	if kernel != "" && !isAssertion(word) {
		return fmt.Errorf("[%s] applies to assertions only, not %q", kernel, word)
	}
	switch word {
	case "kernels":
		c.Kernels = strings.Fields(rest)
	case "setup":
		c.Setup = rest
	case "run":
		c.Run = rest
	case "traffic":
		c.Traffic = rest
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
		c.Asserts = append(c.Asserts, assert{Line: ln, Kernel: kernel, Kind: word, N: n})
	case "stdout", "stderr":
		a, err := parseCounted(rest)
		if err != nil {
			return fmt.Errorf("%s: %w", word, err)
		}
		a.Line, a.Kernel, a.Kind = ln, kernel, word
		c.Asserts = append(c.Asserts, a)
	case "funcs":
		f := strings.Fields(rest)
		n, err := strconv.Atoi(first(f))
		if err != nil || len(f) < 2 {
			return fmt.Errorf("funcs N FUNCTION...")
		}
		c.Asserts = append(c.Asserts, assert{Line: ln, Kernel: kernel, Kind: word, N: n, Funcs: f[1:]})
	case "attached":
		if rest == "" {
			return fmt.Errorf("attached GLOB")
		}
		c.Asserts = append(c.Asserts, assert{Line: ln, Kernel: kernel, Kind: word, Glob: rest})
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
