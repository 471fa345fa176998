package rules

import (
	"bufio"
	"bytes"
	"strconv"
	"strings"
)

// nftFamilies names nfproto values as nft does.
var nftFamilies = map[uint8]string{1: "inet", 2: "ip", 3: "arp", 5: "netdev", 7: "bridge", 10: "ip6"}

// nftRuleText is the rule with a handle as `nft -a list ruleset` prints
// it (nft reads the ruleset from netlink), its line trimmed; "" where
// there is no such rule now.
func nftRuleText(nsPath, family, table, chain string, handle uint64) (string, error) {
	out, err := cachedRun(nsPath, "nft", "-a", "list", "chain", family, table, chain)
	if err != nil {
		return "", err
	}
	suffix := "# handle " + strconv.FormatUint(handle, 10)
	if !bytes.Contains(out, []byte(suffix+"\n")) {
		// A rule added since the listing was kept.
		forget(nsPath, "nft", "-a", "list", "chain", family, table, chain)
		if out, err = cachedRun(nsPath, "nft", "-a", "list", "chain", family, table, chain); err != nil {
			return "", err
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasSuffix(line, suffix) && !strings.HasPrefix(line, "chain ") {
			return line, nil
		}
	}
	return "", nil
}

// nftComment is a rule text's comment "..." (the last), unquoted.
func nftComment(text string) string {
	i := strings.LastIndex(text, `comment "`)
	if i < 0 {
		return ""
	}
	return unquoteRest(text[i+len(`comment "`):])
}

// unquoteRest reads a double-quoted string from after its opening quote:
// up to the closing one, a backslash taking the byte after it as it is.
func unquoteRest(rest string) string {
	var b strings.Builder
	for j := 0; j < len(rest); j++ {
		switch c := rest[j]; {
		case c == '\\' && j+1 < len(rest):
			j++
			b.WriteByte(rest[j])
		case c == '"':
			return b.String()
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// iptablesNftRule is the rule with this handle as iptables-nft prints it
// (iptables-nft -t TABLE -S CHAIN, comments and matches as iptables
// writes them, which nft cannot print) and its number in the chain, where
// the table is iptables-nft's: its rules in nft's order are iptables'.
// ok is false for other tables.
func iptablesNftRule(nsPath, family, table, chain string, handle uint64) (text string, number int, ok bool) {
	tool := map[string]string{"ip": "iptables-nft", "ip6": "ip6tables-nft"}[family]
	if tool == "" {
		return "", 0, false
	}
	out, err := cachedRun(nsPath, "nft", "-a", "list", "chain", family, table, chain)
	if err != nil {
		return "", 0, false
	}
	suffix := "# handle " + strconv.FormatUint(handle, 10)
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.Contains(line, "# handle ") || strings.HasPrefix(line, "chain ") || strings.HasPrefix(line, "table ") {
			continue
		}
		n++
		if strings.HasSuffix(line, suffix) {
			number = n
			break
		}
	}
	if number == 0 {
		return "", 0, false
	}
	ipt, err := cachedRun(nsPath, tool, "-t", table, "-S", chain)
	if err != nil {
		return "", 0, false
	}
	var rules []string
	for _, l := range strings.Split(string(ipt), "\n") {
		if strings.HasPrefix(l, "-A "+chain+" ") {
			rules = append(rules, l)
		}
	}
	if len(rules) != n && number > len(rules) || number > len(rules) {
		return "", 0, false
	}
	return rules[number-1], number, true
}
