package bpftrace

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// defaultTimeout is a case's TIMEOUT when it gives none, as bpftrace's.
const defaultTimeout = 5 * time.Second

// expectMode says how an expectation is checked against the output.
type expectMode string

// The expectations, by their directive.
const (
	expectText       expectMode = "EXPECT"            // a line (or consecutive lines) equal to it
	expectNone       expectMode = "EXPECT_NONE"       // no line equal to it
	expectRegex      expectMode = "EXPECT_REGEX"      // matches somewhere ((?m): ^ and $ at lines)
	expectRegexNone  expectMode = "EXPECT_REGEX_NONE" // matches nowhere
	expectFile       expectMode = "EXPECT_FILE"       // the whole output, as the file has it
	expectJSON       expectMode = "EXPECT_JSON"       // every JSON line, as values, as the file's
	expectReturnCode expectMode = "RETURN_CODE"       // the exit status
)

// expectation is one EXPECT* line of a case.
type expectation struct {
	mode expectMode
	text string
}

// testCase is one case of a topic file: its directives.
type testCase struct {
	file, name string
	line       int
	prog, run  string
	expects    []expectation
	timeout    time.Duration
	before     []string
	after      string
	cleanup    string
	requires   []string
	env        []string
	minKernel  string
	maxKernel  string
	arch       []string
	willFail   bool
	returnCode int
	hasReturn  bool
	skipIfEnv  string
	// features are REQUIRES_FEATURE's names (a leading ! for one that
	// must be absent), as bpftrace's runner reads them.
	features []string
	// newPidns is NEW_PIDNS: bpftrace's runner starts the program in a
	// PID namespace of its own.
	newPidns bool
	// noCompare is why bpftrace is not run beside skbtrace for this case
	// (skbtrace's own probes, a documented difference).
	noCompare string
}

// parseFile reads a topic file: cases separated by empty lines (a line of
// blanks is not one: it continues an EXPECT), each a directive a line; a line that starts with whitespace continues the
// previous PROG or EXPECT; lines starting with # are comments.
func parseFile(path string) ([]*testCase, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var cases []*testCase
	var cur *testCase
	var prev string
	finish := func() error {
		if cur == nil {
			return nil
		}
		if err := cur.validate(); err != nil {
			return fmt.Errorf("%s:%d: %v", path, cur.line, err)
		}
		cases = append(cases, cur)
		cur, prev = nil, ""
		return nil
	}
	for i, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		if line == "" {
			if err := finish(); err != nil {
				return nil, err
			}
			continue
		}
		if cur == nil {
			cur = &testCase{file: filepath.Base(path), line: i + 1, timeout: defaultTimeout}
		}
		if line[0] == ' ' || line[0] == '\t' {
			// A continuation: its indent is the directive's width and a blank.
			text := strings.TrimPrefix(line, strings.Repeat(" ", len(prev)+1))
			switch {
			case prev == "PROG":
				cur.prog += "\n" + text
			case prev == string(expectText) && len(cur.expects) > 0:
				cur.expects[len(cur.expects)-1].text += "\n" + text
			default:
				return nil, fmt.Errorf("%s:%d: a continued line belongs to PROG or EXPECT, not %q", path, i+1, prev)
			}
			continue
		}
		directive, arg, _ := strings.Cut(line, " ")
		prev = directive
		if err := cur.set(directive, strings.TrimSpace(arg)); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, i+1, err)
		}
	}
	if err := finish(); err != nil {
		return nil, err
	}
	return cases, nil
}

// set records one directive.
func (c *testCase) set(directive, arg string) error {
	switch directive {
	case "NAME":
		c.name = arg
	case "PROG":
		c.prog = arg
	case "RUN":
		c.run = arg
	case string(expectText), string(expectNone), string(expectRegex), string(expectRegexNone), string(expectFile), string(expectJSON):
		c.expects = append(c.expects, expectation{mode: expectMode(directive), text: arg})
	case "TIMEOUT":
		s, err := strconv.ParseFloat(arg, 64)
		if err != nil || s <= 0 {
			return fmt.Errorf("TIMEOUT takes seconds, not %q", arg)
		}
		c.timeout = time.Duration(s * float64(time.Second))
	case "BEFORE":
		c.before = append(c.before, arg)
	case "AFTER":
		c.after = arg
	case "CLEANUP":
		c.cleanup = arg
	case "REQUIRES":
		c.requires = append(c.requires, arg)
	case "ENV":
		for _, kv := range strings.Fields(arg) {
			if !strings.Contains(kv, "=") {
				return fmt.Errorf("ENV takes NAME=VALUE, not %q", kv)
			}
			c.env = append(c.env, kv)
		}
	case "MIN_KERNEL":
		c.minKernel = arg
	case "MAX_KERNEL":
		c.maxKernel = arg
	case "ARCH":
		for _, a := range strings.Split(arg, "|") {
			c.arch = append(c.arch, strings.TrimSpace(a))
		}
	case "WILL_FAIL":
		c.willFail = true
	case "RETURN_CODE":
		n, err := strconv.Atoi(arg)
		if err != nil {
			return fmt.Errorf("RETURN_CODE takes a number, not %q", arg)
		}
		c.returnCode, c.hasReturn = n, true
	case "SKIP_IF_ENV_HAS":
		c.skipIfEnv = arg
	case "REQUIRES_FEATURE":
		c.features = append(c.features, strings.Fields(arg)...)
	case "NEW_PIDNS":
		c.newPidns = true
	case "NO_COMPARE":
		if arg == "" {
			return fmt.Errorf("NO_COMPARE takes the reason bpftrace is not run beside it")
		}
		c.noCompare = arg
	default:
		return fmt.Errorf("unknown directive %q (README.md lists them)", directive)
	}
	return nil
}

// exact reports whether the case reads stdout alone (EXPECT_FILE,
// EXPECT_JSON).
func (c *testCase) exact() bool {
	for _, e := range c.expects {
		if e.mode == expectFile || e.mode == expectJSON {
			return true
		}
	}
	return false
}

// validate checks a case as bpftrace's parser does.
func (c *testCase) validate() error {
	exact := 0
	for _, e := range c.expects {
		if e.mode == expectFile || e.mode == expectJSON {
			exact++
		}
	}
	switch {
	case c.name == "":
		return fmt.Errorf("a case needs a NAME")
	case c.prog == "" && c.run == "":
		return fmt.Errorf("case %q needs PROG or RUN", c.name)
	case c.prog != "" && c.run != "":
		return fmt.Errorf("case %q has both PROG and RUN", c.name)
	case len(c.expects) == 0 && !c.hasReturn:
		return fmt.Errorf("case %q expects nothing: give an EXPECT (or a variant) or RETURN_CODE", c.name)
	case exact > 0 && len(c.expects) > 1:
		return fmt.Errorf("case %q: EXPECT_FILE and EXPECT_JSON stand alone", c.name)
	}
	return nil
}
