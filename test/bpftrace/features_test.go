package bpftrace

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"sync"
)

// featureAliases are REQUIRES_FEATURE names that --info says under
// another name.
var featureAliases = map[string]string{
	"kfunc":  "fentry",
	"signal": "send_signal",
}

var (
	featuresMu sync.Mutex
	featuresOf = map[string]map[string]bool{}
)

// hostFeatures reads `BIN --info` once per binary, as bpftrace's runner
// does: each "name: yes" line is a feature present.
func hostFeatures(bin string) map[string]bool {
	featuresMu.Lock()
	defer featuresMu.Unlock()
	if f, ok := featuresOf[bin]; ok {
		return f
	}
	f := map[string]bool{}
	out, _ := exec.Command(bin, "--info").CombinedOutput()
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		name, val, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		if !ok {
			continue
		}
		f[strings.ToLower(strings.TrimSpace(name))] = strings.HasPrefix(strings.TrimSpace(val), "yes")
	}
	featuresOf[bin] = f
	return f
}

// missingFeature names the first REQUIRES_FEATURE the binary lacks (or
// has, for a !name), or "".
func (c *testCase) missingFeature(bin string) string {
	if len(c.features) == 0 {
		return ""
	}
	have := hostFeatures(bin)
	for _, f := range c.features {
		name, negated := strings.CutPrefix(f, "!")
		key := name
		if a, ok := featureAliases[name]; ok {
			key = a
		}
		if have[key] == negated {
			return "REQUIRES_FEATURE " + f + ": --info says " + map[bool]string{true: "yes", false: "no"}[have[key]]
		}
	}
	return ""
}
