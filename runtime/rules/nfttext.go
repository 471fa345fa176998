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
	out, err := runIn(nsPath, "nft", "-a", "list", "chain", family, table, chain)
	if err != nil {
		return "", err
	}
	suffix := "# handle " + strconv.FormatUint(handle, 10)
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
	rest := text[i+len(`comment "`):]
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
