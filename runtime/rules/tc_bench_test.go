package rules

import (
	"os/exec"
	"testing"
)

// BenchmarkTCRead is what naming a tc drop reads each time: the actions of
// a device's filters (a clsact qdisc, one u32 filter with a mirred action
// on each hook of a veth in a namespace of its own), over rtnetlink, and,
// for comparison, as the tc binary lists them (what it ran before: tc -s
// -j filter show, each hook). Needs root and iproute2.
//
//	go test -run - -bench TCRead ./runtime/rules
func BenchmarkTCRead(b *testing.B) {
	for _, tool := range []string{"ip", "tc"} {
		if _, err := exec.LookPath(tool); err != nil {
			b.Skipf("needs %s: %v", tool, err)
		}
	}
	const ns = "rtbenchtc"
	exec.Command("ip", "netns", "del", ns).Run()
	b.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	for _, c := range []string{
		"ip netns add " + ns,
		"ip -n " + ns + " link add v1 type veth peer name v2",
		"tc -n " + ns + " qdisc add dev v2 clsact",
		"tc -n " + ns + " filter add dev v2 ingress protocol ip pref 30 u32 match ip dport 7201 0xffff action mirred egress redirect dev v1",
		"tc -n " + ns + " filter add dev v2 egress protocol ip pref 40 u32 match ip dport 7202 0xffff action mirred egress redirect dev v1",
	} {
		if out, err := exec.Command("sh", "-c", c).CombinedOutput(); err != nil {
			b.Skipf("%s: %v: %s", c, err, out)
		}
	}
	path := "/run/netns/" + ns
	b.Run("rtnetlink", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			acts, err := readTC(path, "v2")
			if err != nil || len(acts) != 2 {
				b.Fatalf("%d actions, %v", len(acts), err)
			}
		}
	})
	b.Run("tc-binary", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			for _, hook := range []string{"ingress", "egress"} {
				if _, err := runIn(path, "tc", "-s", "-j", "filter", "show", "dev", "v2", hook); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
