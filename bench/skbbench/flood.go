package main

import (
	"bytes"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"time"
)

// lineCounter counts the lines written to it and keeps none of them.
type lineCounter struct{ lines int }

func (c *lineCounter) Write(p []byte) (int, error) {
	c.lines += bytes.Count(p, []byte{'\n'})
	return len(p), nil
}

// floodResult is one flood: lines actually printed, the loss the tool
// reported, and how long the sender took.
type floodResult struct {
	lines, lost, sent int
	sendTime          time.Duration
	rssKB             int64
}

var sentRe = regexp.MustCompile(`sent (\d+) in ([0-9.a-zµ]+):`)

// netnsFlood runs skbtrace on skb:* (the tracepoint fallback here: about
// eight tracepoints per datagram) while udpflood sends packets to a closed
// port on the loopback of a network namespace of its own. Lines are
// counted as skbtrace writes them to its stdout, a pipe.
func netnsFlood(skbtrace, flood, format string, packets int) (floodResult, error) {
	ns := fmt.Sprintf("skbbench%d", time.Now().UnixNano()%100000)
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		return floodResult{}, fmt.Errorf("ip netns add: %v: %s", err, out)
	}
	defer exec.Command("ip", "netns", "del", ns).Run()
	if out, err := exec.Command("ip", "-n", ns, "link", "set", "lo", "up").CombinedOutput(); err != nil {
		return floodResult{}, fmt.Errorf("ip link set lo up: %v: %s", err, out)
	}
	send := fmt.Sprintf("ip netns exec %s %s -n %d -port 9", ns, flood, packets)
	// Port 9 is the flood's: benchmarks hold the kernel lock, so no test
	// sends there meanwhile.
	script := `skb:* /dport == 9/ { print(len) }`
	var counter lineCounter
	var errb bytes.Buffer
	cmd := exec.Command(skbtrace, "-f", format, "-c", send, "-e", script)
	cmd.Stdout, cmd.Stderr = &counter, &errb
	done := make(chan int64)
	if err := cmd.Start(); err != nil {
		return floodResult{}, err
	}
	go func() { done <- peakRSS(cmd.Process.Pid, done) }()
	err := cmd.Wait()
	done <- 0
	r := floodResult{lines: counter.lines, rssKB: <-done, lost: lostCount(errb.String(), `skbtrace: (\d+) events lost`)}
	if err != nil {
		return r, fmt.Errorf("skbtrace: %v: %s", err, errb.String())
	}
	m := sentRe.FindStringSubmatch(errb.String())
	if m == nil {
		return r, fmt.Errorf("no sender report in %q", errb.String())
	}
	r.sent, _ = strconv.Atoi(m[1])
	r.sendTime, _ = time.ParseDuration(m[2])
	return r, nil
}
