package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// recursionScript runs on every kernel page fault of one process (pid ==
// WHO) and reads an unmapped kernel address there: the read faults, the
// tracepoint fires inside the program, and the kernel skips that nested
// run. So each run that passed the predicate makes exactly one miss.
const recursionScript = `tracepoint:exceptions:page_fault_kernel /pid == WHO/ {
	@reads = count();
	$p = (uint64 *)0xfffffc0000000000;
	@v = *$p;
}
`

// recursionProbe and recursionReason are the labels its misses get.
const (
	recursionProbe  = "tracepoint:exceptions:page_fault_kernel"
	recursionReason = "recursion: it was already running on that CPU"
)

// faultingCommand reads /dev/zero into fresh buffers: the kernel's writes
// to their pages fault in kernel mode (page_fault_kernel).
const faultingCommand = "dd if=/dev/zero of=/dev/null bs=1M count=8"

func needPageFaultTracepoint(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/sys/kernel/tracing/events/exceptions/page_fault_kernel"); err != nil {
		t.Skipf("no exceptions:page_fault_kernel tracepoint here (x86 has it): %v", err)
	}
}

// missesRecord is the "misses" JSON record's data.
type missesRecord struct {
	Misses []struct {
		What, Probe, Reason string
		Count               *uint64
		Counted             *bool
		Functions           []string
	}
}

// typedRecords returns each JSON line's data by its type, in order.
func typedRecords(t *testing.T, out string) map[string][]json.RawMessage {
	t.Helper()
	recs := map[string][]json.RawMessage{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var r struct {
			Type string
			Data json.RawMessage
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("not a JSON line: %q: %v", l, err)
		}
		recs[r.Type] = append(recs[r.Type], r.Data)
	}
	return recs
}

// skippedRuns is what the misses record says of the recursion probe.
func skippedRuns(t *testing.T, data json.RawMessage) uint64 {
	t.Helper()
	var m missesRecord
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	var n uint64
	found := false
	for _, e := range m.Misses {
		if e.What == "programs_skipped" && e.Probe == recursionProbe && e.Reason == recursionReason && e.Count != nil {
			n += *e.Count
			found = true
		}
	}
	if !found {
		t.Fatalf("no programs_skipped entry for %s in %s", recursionProbe, data)
	}
	return n
}

// TestMissesRecursionAtExit forces real recursion misses on this kernel
// (see recursionScript) in -c's command, and checks that the exit summary
// says exactly as many skipped runs as the program ran, in the text line
// on stderr and in the JSON "misses" record.
func TestMissesRecursionAtExit(t *testing.T) {
	needPageFaultTracepoint(t)
	file := filepath.Join(t.TempDir(), "recursion.st")
	if err := os.WriteFile(file, []byte(strings.ReplaceAll(recursionScript, "WHO", "cpid")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "-f", "json", "-c", faultingCommand, file)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	recs := typedRecords(t, out)
	var reads struct {
		Reads uint64 `json:"@reads"`
	}
	for _, m := range recs["map"] {
		json.Unmarshal(m, &reads)
	}
	if reads.Reads == 0 {
		t.Fatalf("the program never ran in %q: %s\n%s", faultingCommand, out, errs)
	}
	if len(recs["misses"]) != 1 {
		t.Fatalf("%d misses records, want 1:\n%s", len(recs["misses"]), out)
	}
	t.Logf("%d runs of the program, each with a run skipped", reads.Reads)
	if n := skippedRuns(t, recs["misses"][0]); n != reads.Reads {
		t.Errorf("misses record: %d runs skipped, want %d (one for each run)", n, reads.Reads)
	}
	line := regexp.MustCompile(`(?m)^skbtrace: the kernel skipped (\d+) runs of ` + regexp.QuoteMeta(recursionProbe) + ` \(` + regexp.QuoteMeta(recursionReason) + `\)$`)
	m := line.FindStringSubmatch(errs)
	if m == nil || m[1] != strconv.FormatUint(reads.Reads, 10) {
		t.Errorf("stderr says %v, want %d runs skipped:\n%s", m, reads.Reads, errs)
	}
}

// TestMissesRecursionMetrics forces the same misses while a real
// Prometheus scrapes --metrics: skbtrace_programs_skipped_total of the
// probe, with its reason, reaches exactly the program's runs (the script's
// own count, scraped beside it), and the exit summary says the same.
func TestMissesRecursionMetrics(t *testing.T) {
	needPageFaultTracepoint(t)
	if _, err := exec.LookPath("prometheus"); err != nil {
		t.Skipf("no prometheus binary (apt-get install prometheus): %v", err)
	}
	// The faulting process waits for a line before it execs dd, so that
	// its pid is known before skbtrace starts.
	faulter := exec.Command("sh", "-c", "read -r _; exec "+faultingCommand)
	gate, err := faulter.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := faulter.Start(); err != nil {
		t.Fatal(err)
	}
	defer faulter.Process.Kill()
	file := filepath.Join(t.TempDir(), "recursion.st")
	if err := os.WriteFile(file, []byte(strings.ReplaceAll(recursionScript, "WHO", strconv.Itoa(faulter.Process.Pid))), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freePort(t)
	stdout := startCLI(t, "--metrics", addr, "-f", "json", file)
	prom := startPrometheus(t, map[string]string{"a": addr})
	prom.waitQuery(`up`, "node=a: 1", "node")
	fmt.Fprintln(gate, "go")
	gate.Close()
	done := make(chan error, 1)
	go func() { done <- faulter.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: %v", faultingCommand, err)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not end in 20 s", faultingCommand)
	}
	skipped := `sum(skbtrace_programs_skipped_total{probe="` + recursionProbe + `",reason="` + recursionReason + `"})`
	var runs, misses float64
	deadline := time.Now().Add(30 * time.Second)
	for {
		r, m := prom.query(`sum(skbtrace_reads_total)`, 0), prom.query(skipped, 0)
		if len(r) == 1 && len(m) == 1 {
			runs, misses = r[0].value(), m[0].value()
			if runs > 0 && runs == misses {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s Prometheus has %v runs and %v skipped (%s), want as many, not 0", r, m, skipped)
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Logf("Prometheus: %v runs, %v skipped", runs, misses)
	recs := typedRecords(t, stdout())
	if len(recs["misses"]) != 1 {
		t.Fatalf("%d misses records at exit, want 1", len(recs["misses"]))
	}
	if n := skippedRuns(t, recs["misses"][0]); float64(n) != misses {
		t.Errorf("exit summary: %d runs skipped, Prometheus %v", n, misses)
	}
}

// TestMissesSnaplen captures datagrams of two sizes with -w and a snap
// length between them: the exit summary counts exactly the frames cut,
// those the file holds shorter than their length (read back by tshark).
func TestMissesSnaplen(t *testing.T) {
	ns1, _, _ := vethPair(t, 57)
	const small, large = 3, 2
	send := "ip netns exec " + ns1 + " " + sendCommand("10.200.57.2:4757", small, 20, 0) +
		" && ip netns exec " + ns1 + " " + sendCommand("10.200.57.2:4757", large, 200, 0)
	file := filepath.Join(t.TempDir(), "cut.pcapng")
	code, _, errs := runCLI(t, "-e", `tracepoint:net:net_dev_queue /pcap("udp dst port 4757")/ { capture() }`,
		"-w", file, "--snaplen", "100", "-c", send)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	rows := tsharkFields(t, file, nil, "frame.len", "frame.cap_len")
	cut := 0
	for _, r := range rows {
		if r[0] != r[1] {
			cut++
		}
	}
	if len(rows) != small+large || cut != large {
		t.Fatalf("the file has %d frames, %d cut; want %d, %d cut: %v", len(rows), cut, small+large, large, rows)
	}
	if want := fmt.Sprintf("skbtrace: %d captured frames cut to the snap length (--snaplen 100)\n", large); !strings.Contains(errs, want) {
		t.Errorf("stderr lacks %q:\n%s", want, errs)
	}
}
