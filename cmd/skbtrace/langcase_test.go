package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestLanguageCases runs each testdata/lang/*.st on real traffic and looks
// for its expected lines in what it prints. A case is a script with a
// header of comments:
//
//	// traffic: A*3 B*2   datagrams to closed UDP ports A and B of 127.0.0.1
//	// connect: A*2       TCP sessions to 127.0.0.1:A (a listener there), 5 bytes each
//	// want: @[${A}]: 3   a line the output must hold
//	// not: ${A}          text the output must not hold
//	// match: ^\d+:\d+$   a regular expression a line must match
//	                     (where the text varies: a time)
//	// args: 5 hello      the positional parameters $1, $2, ...
//	// command: CMD       the command -c runs (with the traffic's, after it)
//	// flags: -f json     options given before the script
//	// exits              the script ends itself with exit() (an interval:
//	//                    probe), within --duration 20s; it has no traffic
//
// ${A} and ${B}, in the script and the wanted lines, are the ports the test
// picked. Without traffic the script runs with -c true.
func TestLanguageCases(t *testing.T) {
	files, _ := filepath.Glob("testdata/lang/*.st")
	if len(files) == 0 {
		t.Fatal("no cases")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			text, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			ports := map[string]int{"A": closedUDPPort(t), "B": closedUDPPort(t)}
			script := strings.NewReplacer("${A}", strconv.Itoa(ports["A"]), "${B}", strconv.Itoa(ports["B"])).Replace(string(text))
			var sends, want, not, match, args, commands, flags []string
			exits := false
			for _, l := range strings.Split(script, "\n") {
				if rest, ok := strings.CutPrefix(l, "// traffic:"); ok {
					for _, f := range strings.Fields(rest) {
						name, n, _ := strings.Cut(f, "*")
						count, _ := strconv.Atoi(n)
						sends = append(sends, sendCommand(fmt.Sprintf("127.0.0.1:%d", ports[name]), count, 5, 0))
					}
				}
				if rest, ok := strings.CutPrefix(l, "// connect:"); ok {
					for _, f := range strings.Fields(rest) {
						name, n, _ := strings.Cut(f, "*")
						count, _ := strconv.Atoi(n)
						sends = append(sends, connectCommand(fmt.Sprintf("127.0.0.1:%d", ports[name]), count, 5))
					}
				}
				if rest, ok := strings.CutPrefix(l, "// want: "); ok {
					want = append(want, rest)
				}
				if rest, ok := strings.CutPrefix(l, "// match: "); ok {
					match = append(match, rest)
				}
				if rest, ok := strings.CutPrefix(l, "// not: "); ok {
					not = append(not, rest)
				}
				exits = exits || l == "// exits"
				if rest, ok := strings.CutPrefix(l, "// command: "); ok {
					commands = append(commands, rest)
				}
				if rest, ok := strings.CutPrefix(l, "// args:"); ok {
					args = append(args, strings.Fields(rest)...)
				}
				if rest, ok := strings.CutPrefix(l, "// flags:"); ok {
					flags = append(flags, strings.Fields(rest)...)
				}
			}
			path := filepath.Join(t.TempDir(), filepath.Base(file))
			if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := "true"
			if len(sends) > 0 {
				cmd = "sh -c '" + strings.Join(sends, " && ") + "'"
			}
			if len(commands) > 0 {
				cmd = strings.Join(append(sends, commands...), " && ")
			}
			run := []string{"-c", cmd}
			if exits {
				run = []string{"--duration", "20s"}
			}
			code, out, errs := runCLI(t, append(append(append(run, flags...), path), args...)...)
			if code != 0 {
				t.Fatalf("exit %d:\n%s", code, errs)
			}
			lines := strings.Split(out, "\n")
			for _, w := range want {
				found := false
				for _, l := range lines {
					found = found || l == w
				}
				if !found {
					t.Errorf("no line %q in the output:\n%s", w, out)
				}
			}
			for _, m := range match {
				re := regexp.MustCompile(m)
				if !slices.ContainsFunc(lines, re.MatchString) {
					t.Errorf("no line matches %q in the output:\n%s", m, out)
				}
			}
			for _, n := range not {
				if strings.Contains(out, n) {
					t.Errorf("%q in the output:\n%s", n, out)
				}
			}
		})
	}
}
