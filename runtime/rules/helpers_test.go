package rules

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// sh runs a shell command, failing the test when it fails.
func sh(t *testing.T, cmd string) string {
	t.Helper()
	out, err := exec.Command("sh", "-c", cmd).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v: %s", cmd, err, out)
	}
	return string(out)
}

// netnsPair makes namespaces rt{n}a and rt{n}b joined by veths v1 and v2
// (10.202.n.1 and .2), removed when the test ends.
func netnsPair(t *testing.T, n int) (string, string) {
	t.Helper()
	for _, tool := range []string{"ip", "nft"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s: %v", tool, err)
		}
	}
	a, b := fmt.Sprintf("rt%da", n), fmt.Sprintf("rt%db", n)
	exec.Command("ip", "netns", "del", a).Run()
	exec.Command("ip", "netns", "del", b).Run()
	t.Cleanup(func() {
		exec.Command("ip", "netns", "del", a).Run()
		exec.Command("ip", "netns", "del", b).Run()
	})
	sh(t, "ip netns add "+a)
	sh(t, "ip netns add "+b)
	sh(t, fmt.Sprintf("ip -n %s link add v1 type veth peer name v2 netns %s", a, b))
	sh(t, fmt.Sprintf("ip -n %s addr add 10.202.%d.1/24 dev v1 && ip -n %s link set v1 up && ip -n %s link set lo up", a, n, a, a))
	sh(t, fmt.Sprintf("ip -n %s addr add 10.202.%d.2/24 dev v2 && ip -n %s link set v2 up && ip -n %s link set lo up", b, n, b, b))
	return a, b
}

// nftIn loads a ruleset into a namespace.
func nftIn(t *testing.T, ns, ruleset string) {
	t.Helper()
	cmd := exec.Command("ip", "netns", "exec", ns, "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(ruleset)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nft in %s: %v: %s", ns, err, out)
	}
}
