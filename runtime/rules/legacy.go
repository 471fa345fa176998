package rules

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
)

// legacy names iptables-legacy's drops by the kernel's own rule counters,
// read with iptables-legacy-save -c (which prints each rule as
// iptables-legacy -S does, with its counters): a drop is credited to the
// DROP or REJECT rule (or the DROP policy) of the table whose packet
// counter rose since the last read. It names a rule only where exactly one
// has credit left: several rules that dropped packets in between cannot
// be told apart, and it says so. Nothing in the ruleset changes.
type legacy struct {
	mu   sync.Mutex
	nets map[legacyKey]*legacyNet
}

type legacyKey struct {
	netns uint64
	v6    bool
}

type legacyNet struct {
	counts  map[string]uint64 // by rule key, the packets counted at the last read
	credits map[string]uint64 // drops counted but not yet named
	rules   map[string]legacyRule
}

// legacyRule is one rule (or a built-in chain's policy) of a save.
type legacyRule struct {
	table, chain string
	number       int    // in its chain, from 1; 0 for the policy
	text         string // as iptables-legacy -S prints it
	drops        bool   // its verdict drops: -j DROP or REJECT, or policy DROP
	packets      uint64
}

func saveTool(v6 bool) string {
	if v6 {
		return "ip6tables-legacy-save"
	}
	return "iptables-legacy-save"
}

// read runs the save in a namespace and parses it.
func readLegacy(nsPath string, v6 bool) (map[string]legacyRule, error) {
	// The tables the namespace has: none, no save to run (and nothing
	// loaded by asking).
	names := "/proc/thread-self/net/ip_tables_names"
	if v6 {
		names = "/proc/thread-self/net/ip6_tables_names"
	}
	var have []byte
	_ = inNetns(nsPath, func() error {
		have, _ = os.ReadFile(names)
		return nil
	})
	if len(bytes.TrimSpace(have)) == 0 {
		return nil, nil
	}
	out, err := runIn(nsPath, saveTool(v6), "-c")
	if err != nil {
		return nil, err
	}
	return parseSave(out), nil
}

// parseSave parses iptables-save -c's output: tables (*filter), chains
// with policies and counters (:INPUT DROP [3:180]) and rules
// ([1:29] -A INPUT ...); rule keys are table, chain and the rule's
// place, with its text (a rule inserted above moves the others: their
// keys change and their counts start over).
func parseSave(out []byte) map[string]legacyRule {
	rules := map[string]legacyRule{}
	table := ""
	numbers := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "*"):
			table = line[1:]
			clear(numbers)
		case strings.HasPrefix(line, ":"):
			f := strings.Fields(line[1:])
			if len(f) >= 3 && f[1] != "-" {
				p, _ := parseCounters(f[2])
				r := legacyRule{table: table, chain: f[0], text: "-P " + f[0] + " " + f[1], drops: f[1] == "DROP", packets: p}
				rules[table+"\x00"+r.text] = r
			}
		case strings.HasPrefix(line, "["):
			end := strings.IndexByte(line, ']')
			if end < 0 {
				continue
			}
			p, ok := parseCounters(line[:end+1])
			text := strings.TrimSpace(line[end+1:])
			f := strings.Fields(text)
			if !ok || len(f) < 2 || f[0] != "-A" {
				continue
			}
			numbers[f[1]]++
			r := legacyRule{table: table, chain: f[1], number: numbers[f[1]], text: text, packets: p,
				drops: strings.HasSuffix(text, " -j DROP") || strings.Contains(text, " -j REJECT")}
			rules[fmt.Sprintf("%s\x00%s\x00%d\x00%s", table, f[1], r.number, text)] = r
		}
	}
	return rules
}

// parseCounters reads [packets:bytes].
func parseCounters(s string) (uint64, bool) {
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	p, _, ok := strings.Cut(s, ":")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(p, 10, 64)
	return n, err == nil
}

// start reads a namespace's counters for the first time: nothing is kept
// where it has no iptables-legacy rules; an error where it has tables but
// their save failed (no iptables-legacy-save, say), whose drops are then
// not named.
func (l *legacy) start(netns uint64, nsPath string, v6 bool) error {
	rules, err := readLegacy(nsPath, v6)
	if err != nil || len(rules) == 0 {
		return err
	}
	n := &legacyNet{counts: map[string]uint64{}, credits: map[string]uint64{}, rules: rules}
	for k, r := range rules {
		n.counts[k] = r.packets
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.nets == nil {
		l.nets = map[legacyKey]*legacyNet{}
	}
	l.nets[legacyKey{netns, v6}] = n
	return nil
}

// name credits the drops counted since the last read and names the one
// rule with credit, if exactly one has; it returns how many have credit
// otherwise (none: not an iptables-legacy drop, or one read before), and
// whether the namespace has iptables-legacy rules at all.
func (l *legacy) name(netns uint64, nsPath string, v6 bool) (legacyRule, int, bool, error) {
	l.mu.Lock()
	n := l.nets[legacyKey{netns, v6}]
	l.mu.Unlock()
	if n == nil {
		return legacyRule{}, 0, false, nil
	}
	rules, err := readLegacy(nsPath, v6)
	if err != nil {
		return legacyRule{}, 0, true, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, r := range rules {
		if prev, ok := n.counts[k]; ok && r.drops && r.packets > prev {
			n.credits[k] += r.packets - prev
		}
		n.counts[k] = r.packets
	}
	n.rules = rules
	var hit []string
	for k, c := range n.credits {
		if c == 0 {
			delete(n.credits, k)
			continue
		}
		hit = append(hit, k)
	}
	if len(hit) != 1 {
		return legacyRule{}, len(hit), true, nil
	}
	n.credits[hit[0]]--
	return rules[hit[0]], 1, true, nil
}

// legacyComment is a rule's --comment, unquoted.
func legacyComment(text string) string {
	i := strings.Index(text, "--comment ")
	if i < 0 {
		return ""
	}
	rest := text[i+len("--comment "):]
	if !strings.HasPrefix(rest, `"`) {
		w, _, _ := strings.Cut(rest, " ")
		return w
	}
	return unquoteRest(rest[1:])
}
