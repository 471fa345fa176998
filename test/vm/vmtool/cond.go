package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// A cond is a case file's condition on the kernel: the words of a kernels
// line, or what is between the brackets of [COND] before an assertion. The
// words are alternatives (one must hold); a word is terms joined by commas
// (each must hold); a term is an atom, or ! and an atom (it must not hold):
//
//	6.1, 6.12-arm64, trixie/arm64   the label: the -k spec run.sh booted, exactly
//	>=5.17 >5.17 <=6.2 <6.3 =6.1    the guest's uname -r against a version,
//	                                compared on as many numbers as the version has
//	                                (=6.1: any 6.1.x; Debian's 5.10 says 5.10.0)
//	amd64 arm64                     the guest's architecture
//	kprobe-multi                    the kernel has kprobe-multi links (CONFIG_FPROBE:
//	                                struct bpf_kprobe_multi_link in its BTF)
//	kprobes                         the kernel has kprobes (the kprobe PMU)
//	drop-reasons                    the kernel has enum skb_drop_reason (5.17 and later)
//	btf:NAME                        the kernel's BTF has a type, function or variable NAME
//	traceable:NAME                  ftrace can trace function NAME (available_filter_functions):
//	                                kprobes, kprobe-multi and fentry attach to it
//
// So "kernels 6.1 6.12" runs on either label, "[>=5.17,<6.3]" holds on 5.17
// to 6.2, "[!arm64]" off arm64 and "[6.12,kprobe-multi !amd64]" on a 6.12
// label with kprobe-multi or on any kernel that is not amd64.
type cond struct {
	Text string
	Alts [][]term
}

// term is one atom of a cond, maybe negated.
type term struct {
	Not  bool
	Kind string // label, version, arch, feature, btf, traceable
	Op   string // version: >=, >, <=, <, =
	Ver  []int
	Name string // label, arch, feature, btf or traceable name
}

// features are the names a condition may ask for, with what they mean.
var features = map[string]string{
	"kprobe-multi": "kprobe-multi links (struct bpf_kprobe_multi_link in the BTF: CONFIG_FPROBE)",
	"kprobes":      "kprobes (the kprobe PMU in /sys/bus/event_source/devices)",
	"drop-reasons": "drop reasons (enum skb_drop_reason in the BTF)",
}

var (
	labelRe   = regexp.MustCompile(`^[0-9A-Za-z][0-9A-Za-z._+/-]*$`)
	versionRe = regexp.MustCompile(`^(>=|<=|>|<|=)(\d+(?:\.\d+){0,2})$`)
	btfNameRe = regexp.MustCompile(`^(btf|traceable):([A-Za-z_][A-Za-z0-9_.]*)$`)
)

// parseCond parses a condition: words separated by blanks.
func parseCond(s string) (*cond, error) {
	c := &cond{Text: strings.Join(strings.Fields(s), " ")}
	if c.Text == "" {
		return nil, fmt.Errorf("an empty kernel condition")
	}
	for _, w := range strings.Fields(s) {
		var alt []term
		for _, a := range strings.Split(w, ",") {
			t, err := parseTerm(a)
			if err != nil {
				return nil, fmt.Errorf("kernel condition %q: %w", c.Text, err)
			}
			alt = append(alt, t)
		}
		c.Alts = append(c.Alts, alt)
	}
	return c, nil
}

func parseTerm(a string) (term, error) {
	t := term{}
	if strings.HasPrefix(a, "!") {
		t.Not, a = true, a[1:]
	}
	switch {
	case a == "":
		return t, fmt.Errorf("an empty term (a condition is TERM[,TERM...] [...], a term [!]ATOM)")
	case strings.ContainsAny(a, "<>="):
		m := versionRe.FindStringSubmatch(a)
		if m == nil {
			return t, fmt.Errorf("%q: a version comparison is >=, >, <=, < or = and MAJOR[.MINOR[.PATCH]], as >=5.17", a)
		}
		t.Kind, t.Op = "version", m[1]
		for _, n := range strings.Split(m[2], ".") {
			v, _ := strconv.Atoi(n)
			t.Ver = append(t.Ver, v)
		}
	case a == "amd64" || a == "arm64":
		t.Kind, t.Name = "arch", a
	case features[a] != "":
		t.Kind, t.Name = "feature", a
	case strings.HasPrefix(a, "btf:"), strings.HasPrefix(a, "traceable:"):
		m := btfNameRe.FindStringSubmatch(a)
		if m == nil {
			return t, fmt.Errorf("%q: btf:NAME or traceable:NAME, NAME a C identifier", a)
		}
		t.Kind, t.Name = m[1], m[2]
	case labelRe.MatchString(a):
		t.Kind, t.Name = "label", a
	default:
		return t, fmt.Errorf("%q is not a label, a version comparison, an architecture or a feature", a)
	}
	return t, nil
}

func (c *cond) String() string {
	if c == nil {
		return ""
	}
	return c.Text
}

// holds reports whether the condition holds on the kernel env describes. A
// nil cond holds everywhere. The error says what env does not know (recheck's
// env, made from a log, knows no BTF).
func (c *cond) holds(env *kernelEnv) (bool, error) {
	if c == nil {
		return true, nil
	}
	for _, alt := range c.Alts {
		all := true
		for _, t := range alt {
			ok, err := t.holds(env)
			if err != nil {
				return false, err
			}
			if !ok {
				all = false
				break
			}
		}
		if all {
			return true, nil
		}
	}
	return false, nil
}

func (t term) holds(env *kernelEnv) (bool, error) {
	var ok bool
	switch t.Kind {
	case "label":
		ok = env.Label == t.Name
	case "arch":
		ok = env.Arch == t.Name
	case "version":
		rel := releaseVersion(env.Release)
		if rel == nil {
			return false, fmt.Errorf("no kernel version in uname -r %q", env.Release)
		}
		d := compareVersions(rel, t.Ver)
		switch t.Op {
		case ">=":
			ok = d >= 0
		case ">":
			ok = d > 0
		case "<=":
			ok = d <= 0
		case "<":
			ok = d < 0
		case "=":
			ok = d == 0
		}
	case "feature":
		v, known := env.Features[t.Name]
		if !known {
			return false, fmt.Errorf("feature %s is not known here", t.Name)
		}
		ok = v
	case "btf":
		if env.BTF == nil {
			return false, fmt.Errorf("the kernel's BTF is not known here (btf:%s)", t.Name)
		}
		ok = env.BTF(t.Name)
	case "traceable":
		if env.Traceable == nil {
			return false, fmt.Errorf("the kernel's traceable functions are not known here (traceable:%s)", t.Name)
		}
		ok = env.Traceable(t.Name)
	}
	return ok != t.Not, nil
}

// releaseVersion is the leading MAJOR.MINOR.PATCH of a uname -r
// ("6.12.38+deb12-amd64": 6 12 38; "5.10.0-32-amd64": 5 10 0); nil if none.
func releaseVersion(rel string) []int {
	var v []int
	for _, p := range strings.SplitN(rel, ".", 3) {
		end := 0
		for end < len(p) && p[end] >= '0' && p[end] <= '9' {
			end++
		}
		if end == 0 {
			break
		}
		n, _ := strconv.Atoi(p[:end])
		v = append(v, n)
		if end < len(p) {
			break
		}
	}
	return v
}

// compareVersions compares rel with want on want's numbers: -1, 0 or 1. A
// number rel lacks is 0.
func compareVersions(rel, want []int) int {
	for i, w := range want {
		r := 0
		if i < len(rel) {
			r = rel[i]
		}
		switch {
		case r < w:
			return -1
		case r > w:
			return 1
		}
	}
	return 0
}
