package metrics

import (
	"strconv"
	"strings"
)

// Namespace starts every metric's name.
const Namespace = "skbtrace"

// metricName is a map's metric name: skbtrace_NAME, with suffix (_total
// for counters). The keyless map @ is skbtrace_map.
func metricName(mapName, suffix string) string {
	n := sanitize(mapName)
	if n == "" {
		n = "map"
	}
	return Namespace + "_" + n + suffix
}

// labelNames names a map's labels after its key expressions, in Prometheus'
// label syntax: a scratch variable's $ and a tracepoint field's args. are
// dropped (args.saddr: saddr), everything else not a letter, digit or _
// becomes _ (ksym(args.location): ksym_location), rule(...)'s label is
// rule; a literal's label is
// keyN, N its place in the key. Names the syntax reserves
// (__x), le on histograms, and repeats get a suffix: key, key_2.
func labelNames(keys []string, hist bool) []string {
	out := make([]string, len(keys))
	seen := map[string]bool{}
	for i, k := range keys {
		n := sanitize(labelText(k))
		switch {
		case n == "" || literal(k):
			n = "key" + strconv.Itoa(i+1)
		case strings.HasPrefix(n, "__"):
			n = "key" + n
		case hist && n == "le":
			n = "le_key"
		}
		base := n
		for j := 2; seen[n]; j++ {
			n = base + "_" + strconv.Itoa(j)
		}
		seen[n] = true
		out[i] = n
	}
	return out
}

// literal reports whether a key expression is a number or string literal,
// whose text names nothing: such a key's label is keyN.
func literal(k string) bool {
	k = strings.TrimSpace(k)
	return k != "" && (k[0] >= '0' && k[0] <= '9' || k[0] == '"' || k[0] == '-')
}

// labelText drops the parts of a key expression that say nothing of what
// it is: $ of scratch variables, args. of tracepoint and function fields.
func labelText(k string) string {
	k = strings.TrimSpace(k)
	if strings.HasPrefix(k, "rule(") {
		// rule(reason, netns, ...)'s label is the rule's: rule.
		return "rule"
	}
	k = strings.ReplaceAll(k, "$", "")
	return strings.ReplaceAll(k, "args.", "")
}

// sanitize maps s to [a-zA-Z_][a-zA-Z0-9_]*: runs of other characters
// become one _, with none at either end, and a leading digit gets a _.
func sanitize(s string) string {
	var b strings.Builder
	under := false
	for _, r := range s {
		ok := r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
		if !ok {
			under = b.Len() > 0
			continue
		}
		if under {
			b.WriteByte('_')
			under = false
		}
		b.WriteRune(r)
	}
	n := b.String()
	if n != "" && n[0] >= '0' && n[0] <= '9' {
		n = "_" + n
	}
	return n
}
