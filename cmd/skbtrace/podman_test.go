package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skbtrace/skbtrace/internal/syncbuf"
)

// TestPodmanNames runs podman containers on a host without Kubernetes (no
// CRI socket answers) and checks that skbtrace gives them the names it
// gives pods: podman:NAME for their network namespaces and host-side
// veths, in text, JSON, pcapng comments and whydrop, and that --container
// chooses their packets, also of a container started while tracing.
//
// Three containers of the podnet image sit on podman's bridge: skbt-web
// serves UDP on webPort, skbt-other serves the same port, skbt-cli sends.
// Every send is podnet udp-send with a count.
//
// Run it alone with the others' containers and traffic out of the way:
//
//	flock /tmp/skbtrace-e2e.lock go test -count=1 -run TestPodman ./cmd/skbtrace/
func TestPodmanNames(t *testing.T) {
	image := podnetImage(t)
	const webPort = 5941
	web := runPodnet(t, image, "skbt-web", "udp-serve", fmt.Sprint(webPort))
	cli := runPodnet(t, image, "skbt-cli", "sleep")
	other := runPodnet(t, image, "skbt-other", "udp-serve", fmt.Sprint(webPort))
	// The namespace podman's veths are in: this thread's. (The main
	// thread's, /proc/self, is wrong if a test ever left it wedged in
	// another namespace; tcAttach no longer does.)
	hostNetns := nsInode(t, "/proc/thread-self/ns/net")
	t.Logf("web %+v\ncli %+v\nother %+v\nhost netns %d", *web, *cli, *other, hostNetns)
	toWeb := fmt.Sprintf("%s:%d", web.IP, webPort)
	udpToWeb := fmt.Sprintf(`skb:* /l4proto == udp && dport == %d/ { print(dev, netns, pod, container, saddr, daddr) }`, webPort)

	t.Run("Text", func(t *testing.T) {
		out, _ := runTrace(t, "-e", udpToWeb, "-c", execSend(cli, toWeb, 3))
		// Podman containers' addresses are not named: runtime/names
		// learns addresses only from the CRI's pod sandboxes (their IPs),
		// and podman is no CRI here. So saddr and daddr print bare.
		addrs := fmt.Sprintf(` saddr=%s daddr=%s$`, regexp.QuoteMeta(cli.IP), regexp.QuoteMeta(web.IP))
		want := map[string]*regexp.Regexp{
			// In a container's namespace: its netns, pod and container.
			"web's netns": regexp.MustCompile(fmt.Sprintf(`dev=eth0 netns=%d \(podman:skbt-web\) pod=podman:skbt-web container=skbt-web`, web.Netns) + addrs),
			"cli's netns": regexp.MustCompile(fmt.Sprintf(`dev=eth0 netns=%d \(podman:skbt-cli\) pod=podman:skbt-cli container=skbt-cli`, cli.Netns) + addrs),
			// On the host: the veth names its container; the host's
			// namespace is nobody's, so pod is netns:INODE.
			"web's veth": regexp.MustCompile(fmt.Sprintf(`dev=%s \(podman:skbt-web\) netns=%d pod=netns:%d container=-`, regexp.QuoteMeta(web.Veth), hostNetns, hostNetns) + addrs),
			"cli's veth": regexp.MustCompile(fmt.Sprintf(`dev=%s \(podman:skbt-cli\) netns=%d pod=netns:%d container=-`, regexp.QuoteMeta(cli.Veth), hostNetns, hostNetns) + addrs),
		}
		got := map[string]int{}
		for _, l := range lines(out) {
			if !strings.Contains(l, " dev=") {
				continue
			}
			matched := false
			for k, re := range want {
				if re.MatchString(l) {
					got[k]++
					matched = true
				}
			}
			// Another hop on the host (the bridge) names no container;
			// any hop in a container's namespace or on its veth must.
			if !matched && (strings.Contains(l, fmt.Sprintf("netns=%d", web.Netns)) || strings.Contains(l, fmt.Sprintf("netns=%d", cli.Netns)) ||
				strings.Contains(l, "dev="+web.Veth+" ") || strings.Contains(l, "dev="+cli.Veth+" ")) {
				t.Errorf("a container's hop not named as it should be: %q", l)
			}
		}
		for k := range want {
			if got[k] == 0 {
				t.Errorf("no line of %s (%s):\n%s", k, want[k], out)
			}
		}
	})

	t.Run("JSON", func(t *testing.T) {
		out, _ := runTrace(t, "-f", "json", "-e", udpToWeb, "-c", execSend(cli, toWeb, 2))
		var inWeb, onVeth int
		for _, l := range lines(out) {
			var ev map[string]json.RawMessage
			if err := json.Unmarshal([]byte(l), &ev); err != nil {
				t.Fatalf("not JSON: %q: %v", l, err)
			}
			if string(ev["type"]) != `"event"` {
				continue
			}
			var data map[string]any
			if err := json.Unmarshal(ev["data"], &data); err != nil {
				t.Fatalf("event data: %q: %v", l, err)
			}
			// Values stay IDs: the netns is a number, the addresses bare.
			netns, ok := data["netns"].(float64)
			if !ok {
				t.Errorf("netns is not a number: %s", l)
				continue
			}
			if data["saddr"] != cli.IP || data["daddr"] != web.IP {
				t.Errorf("addresses %v > %v, want %s > %s: %s", data["saddr"], data["daddr"], cli.IP, web.IP, l)
			}
			// A container is no Kubernetes pod: no "pod" or "namespace"
			// beside "data", ever.
			if _, ok := ev["pod"]; ok {
				t.Errorf("an event with a top-level pod: %s", l)
			}
			if _, ok := ev["namespace"]; ok {
				t.Errorf("an event with a top-level namespace: %s", l)
			}
			switch {
			case uint64(netns) == web.Netns:
				inWeb++
				if string(ev["container"]) != `"skbt-web"` || data["pod"] != "podman:skbt-web" || data["container"] != "skbt-web" {
					t.Errorf("an event in web's namespace: container %s, data.pod %v, data.container %v: %s", ev["container"], data["pod"], data["container"], l)
				}
			case data["dev"] == web.Veth:
				// The host's namespace is nobody's: the event is named
				// by its device, web's veth.
				onVeth++
				if string(ev["container"]) != `"skbt-web"` || data["pod"] != fmt.Sprintf("netns:%d", hostNetns) || data["container"] != "-" {
					t.Errorf("an event on web's veth: container %s, data.pod %v, data.container %v: %s", ev["container"], data["pod"], data["container"], l)
				}
			case uint64(netns) == cli.Netns:
				if string(ev["container"]) != `"skbt-cli"` {
					t.Errorf("an event in cli's namespace: container %s: %s", ev["container"], l)
				}
			}
		}
		if inWeb == 0 || onVeth == 0 {
			t.Fatalf("%d events in web's namespace and %d on its veth, want some of each:\n%s", inWeb, onVeth, out)
		}
	})

	t.Run("ContainerFilter", func(t *testing.T) {
		toOther := fmt.Sprintf("%s:%d", other.IP, webPort)
		cmd := fmt.Sprintf("sh -c '%s && %s'", execSend(cli, toWeb, 2), execSend(cli, toOther, 2))
		out, errs := runTrace(t, "--container", "skbt-web", "-c", cmd)
		webLine := regexp.MustCompile(fmt.Sprintf(`dev=eth0 netns=%d \(podman:skbt-web\) .*pkt=IP %s\.\d+ > %s\.%d: UDP`,
			web.Netns, regexp.QuoteMeta(cli.IP), regexp.QuoteMeta(web.IP), webPort))
		var toW int
		for _, l := range lines(out) {
			if webLine.MatchString(l) {
				toW++
			}
			// cli's datagrams to other do not involve web: none is
			// traced, anywhere (ARP broadcasts reach web's namespace:
			// those are web's packets, and may show).
			if strings.Contains(l, fmt.Sprintf("> %s.%d: UDP", other.IP, webPort)) || (strings.Contains(l, fmt.Sprintf("netns=%d ", other.Netns)) && strings.Contains(l, "UDP")) {
				t.Errorf("a datagram of skbt-other's, not web's, was traced: %q", l)
			}
		}
		if toW == 0 {
			t.Fatalf("no datagram to web in web's namespace traced:\n%s\nstderr:\n%s", out, errs)
		}
	})

	t.Run("LateContainer", func(t *testing.T) {
		const late = "skbt-late1"
		podmanErr("rm", "-f", "-t", "0", late)
		t.Cleanup(func() { podmanErr("rm", "-f", "-t", "0", late) })
		// The late container is started by -c, after skbtrace has
		// attached, and sends for at most 10 s (1000 datagrams, 10 ms
		// apart); the test stops it once its datagrams are traced.
		runArgs := append(append(append(append([]string{"podman"}, podmanArgs...), "run", "--rm"), podmanRunFlags...), "--name", late, image, "udp-send", toWeb, "1000")
		cmd := fmt.Sprintf("sh -c '%s; exit 0'", strings.Join(runArgs, " "))
		var outb, errb syncbuf.Buffer
		nowTracing := regexp.MustCompile(`now tracing podman:skbt-late1 \(network namespace (\d+)\)`)
		lateLine := regexp.MustCompile(`netns=(\d+) \(podman:skbt-late1\) .*> ` + regexp.QuoteMeta(web.IP) + fmt.Sprintf(`\.%d: UDP`, webPort))
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			deadline := time.After(30 * time.Second)
			tick := time.NewTicker(50 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-deadline:
					podmanErr("rm", "-f", "-t", "0", late)
					return
				case <-tick.C:
					if nowTracing.MatchString(errb.String()) && lateLine.MatchString(outb.String()) {
						podmanErr("rm", "-f", "-t", "0", late)
						return
					}
				}
			}
		}()
		code := run([]string{"--container", "skbt-late*", "-c", cmd}, &outb, &errb)
		close(stop)
		wg.Wait()
		out, errs := outb.String(), errb.String()
		if code != 0 {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
		}
		if !strings.Contains(errs, "no network namespace matches --container skbt-late* yet") {
			t.Errorf("stderr does not say that nothing matched at the start:\n%s", errs)
		}
		m := nowTracing.FindStringSubmatch(errs)
		if m == nil {
			t.Fatalf("stderr does not say when skbt-late1 joined:\n%s\nstdout:\n%s", errs, out)
		}
		lm := lateLine.FindStringSubmatch(out)
		if lm == nil {
			t.Fatalf("none of skbt-late1's datagrams was traced:\n%s\nstderr:\n%s", out, errs)
		}
		if lm[1] != m[1] {
			t.Errorf("stderr says network namespace %s joined, the datagrams are in %s", m[1], lm[1])
		}
		// No datagram of another container's. (What shows of late1's
		// datagrams, as this kernel ran it: their hops in late1's own
		// namespace, net_dev_queue and net_dev_start_xmit; the pod
		// filters test each hop's namespace, and the --filter script they
		// run alone does not track() a packet out of it.)
		for _, l := range lines(out) {
			if (strings.Contains(l, fmt.Sprintf("netns=%d ", cli.Netns)) || strings.Contains(l, fmt.Sprintf("netns=%d ", other.Netns))) && strings.Contains(l, "UDP") {
				t.Errorf("a datagram in another container's namespace traced: %q", l)
			}
		}
	})

	t.Run("Pcapng", func(t *testing.T) {
		if _, err := exec.LookPath("tshark"); err != nil {
			t.Skip("tshark is not installed")
		}
		file := filepath.Join(t.TempDir(), "web.pcapng")
		runTrace(t, "-w", file, "--container", "skbt-web", "-c", execSend(cli, toWeb, 2))
		out, err := exec.Command("tshark", "-r", file, "-T", "fields", "-e", "frame.comment").CombinedOutput()
		if err != nil {
			t.Fatalf("tshark: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), "container=podman:skbt-web") {
			t.Fatalf("no frame comment names container=podman:skbt-web:\n%s", out)
		}
		// A hop in web's namespace says so: its netns and its name.
		if !regexp.MustCompile(fmt.Sprintf(`netns=%d\b.* container=podman:skbt-web`, web.Netns)).Match(out) {
			t.Errorf("no comment of a hop in web's namespace (%d) names it:\n%s", web.Netns, out)
		}
		if strings.Contains(string(out), " pod=") {
			t.Errorf("a comment names a pod, but these are podman containers:\n%s", out)
		}
	})

	t.Run("Whydrop", func(t *testing.T) {
		const dropPort = 5942
		nsPath := fmt.Sprintf("/proc/%d/ns/net", web.PID)
		// In web's namespace only: the host's ruleset is not touched.
		nft := func(stdin string, args ...string) ([]byte, error) {
			cmd := exec.Command("nsenter", append([]string{"--net=" + nsPath, "nft"}, args...)...)
			if stdin != "" {
				cmd.Stdin = strings.NewReader(stdin)
			}
			return cmd.CombinedOutput()
		}
		nft("", "delete", "table", "inet", "skbt_podman")
		if out, err := nft(fmt.Sprintf(`table inet skbt_podman {
	chain skbt_input {
		type filter hook input priority 0; policy accept;
		udp dport %d drop
	}
}`, dropPort), "-f", "-"); err != nil {
			t.Fatalf("nft in skbt-web: %v: %s", err, out)
		}
		t.Cleanup(func() {
			if out, err := nft("", "delete", "table", "inet", "skbt_podman"); err != nil {
				// The container may be gone already: its rules with it.
				if _, serr := os.Stat(nsPath); serr == nil {
					t.Errorf("removing the nft table in skbt-web: %v: %s", err, out)
				}
			}
		})
		out, _ := runTrace(t, "-c", execSend(cli, fmt.Sprintf("%s:%d", web.IP, dropPort), 2), "whydrop")
		head := regexp.MustCompile(fmt.Sprintf(`(?m)^\S+ udp +%s:\d+ > %s:%d dev eth0 netns %d \(podman:skbt-web\)$`,
			regexp.QuoteMeta(cli.IP), regexp.QuoteMeta(web.IP), dropPort, web.Netns))
		b := regexp.MustCompile(head.String() + `\n(  .*\n)*`).FindString(out)
		if b == "" {
			t.Fatalf("no drop whose first line names (podman:skbt-web) for its namespace, want %s:\n%s", head, out)
		}
		for _, want := range []string{
			"  why    NETFILTER_DROP: a netfilter rule (nftables or iptables) dropped it\n",
			"  rule   hook input, table skbt_podman, chain skbt_input\n",
		} {
			if !strings.Contains(b, want) {
				t.Errorf("block lacks %q:\n%s", want, b)
			}
		}
	})
}
