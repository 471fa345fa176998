package session

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// TestSkippedSummaryNamesFunctions checks what stderr says of skipped
// functions: the count by reason, then every one named under its reason,
// the kernel's errno said in words where its cause is known.
func TestSkippedSummaryNamesFunctions(t *testing.T) {
	st := &AttachStats{Backend: BackendKprobe, Skipped: map[string][]string{}}
	for _, fn := range []string{"dup_b", "dup_a", "dup_c"} {
		st.skip(fn, fmt.Errorf("attach %s: %w", fn, unix.EADDRNOTAVAIL))
	}
	st.skip("held", fmt.Errorf("create kprobe: %w", unix.EBUSY))
	st.skip("odd", fmt.Errorf("attach odd: strange"))
	dup := "several functions share the name (static functions), which a kprobe cannot tell apart"
	want := []string{
		"5 functions skipped (1: another tracer holds it; 3: " + dup + "; 1: strange)",
		"  skipped, another tracer holds it: held",
		"  skipped, " + dup + ": dup_a dup_b dup_c",
		"  skipped, strange: odd",
	}
	if got := st.Summary(); !slices.Equal(got, want) {
		t.Errorf("summary:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	fe := &AttachStats{Backend: BackendFentry, Skipped: map[string][]string{}}
	for fn, log := range map[string]string{
		"tcf_fill_node":        "The function tcf_fill_node has 14 arguments. Too many.",
		"tcp_v6_send_response": "The function tcp_v6_send_response has 14 arguments. Too many.",
		"nf_log_packet":        "The function nf_log_packet with variable args is unsupported.",
	} {
		fe.skip(fn, fmt.Errorf("load %s: %w", fn, &ebpf.VerifierError{Log: []string{"processed 0 insns", log}}))
	}
	want = []string{
		"3 functions skipped (1: verifier: function with variable args; 2: verifier: too many arguments for a trampoline)",
		"  skipped, verifier: function with variable args: nf_log_packet",
		"  skipped, verifier: too many arguments for a trampoline: tcf_fill_node tcp_v6_send_response",
	}
	if got := fe.Summary(); !slices.Equal(got, want) {
		t.Errorf("fentry summary:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if st.SkippedTotal() != 5 {
		t.Errorf("total %d", st.SkippedTotal())
	}
}

// TestBisectSkipsOnlyRefusingFunctions checks that a set with refusing
// functions attaches everything else, in few tries.
func TestBisectSkipsOnlyRefusingFunctions(t *testing.T) {
	var fns []string
	for i := range 1000 {
		fns = append(fns, fmt.Sprintf("f%d", i))
	}
	bad := map[string]bool{"f3": true, "f500": true, "f999": true}
	var attached, skipped []string
	tries := 0
	bisect(fns, func(part []string) error {
		tries++
		for _, f := range part {
			if bad[f] {
				return errors.New("refused")
			}
		}
		attached = append(attached, part...)
		return nil
	}, func(fn string, err error) { skipped = append(skipped, fn) })
	if !slices.Equal(skipped, []string{"f3", "f500", "f999"}) {
		t.Errorf("skipped %v; want f3 f500 f999", skipped)
	}
	if len(attached) != 997 || len(skipped) != 3 {
		t.Errorf("attached %d, skipped %d; want 997 and 3", len(attached), len(skipped))
	}
	if tries > 70 {
		t.Errorf("%d tries; bisection should need about 3*2*log2(1000)", tries)
	}
	slices.Sort(attached)
	if slices.Contains(attached, "f500") {
		t.Error("a refusing function was counted as attached")
	}
}

// TestChooseBackend checks auto's order, the fallback with reasons, and a
// forced backend's clear failure.
func TestChooseBackend(t *testing.T) {
	works := func(ok ...Backend) func(Backend) error {
		return func(b Backend) error {
			if slices.Contains(ok, b) {
				return nil
			}
			return fmt.Errorf("no %s", b)
		}
	}
	for _, tc := range []struct {
		forced  string
		ok      []Backend
		want    Backend
		reasons int
		err     string
	}{
		{"auto", []Backend{BackendKprobeMulti, BackendKprobe}, BackendKprobeMulti, 0, ""},
		{"auto", []Backend{BackendFentry, BackendKprobe}, BackendFentry, 1, ""},
		{"auto", []Backend{BackendKprobe}, BackendKprobe, 2, ""},
		{"auto", nil, BackendTracepoint, 3, ""},
		{"fentry", []Backend{BackendFentry}, BackendFentry, 0, ""},
		{"kprobe", nil, "", 0, "--backend kprobe: no kprobe"},
		{"tracepoint", nil, BackendTracepoint, 0, ""},
		{"bogus", nil, "", 0, "--backend takes auto"},
	} {
		got, reasons, err := ChooseBackend(tc.forced, works(tc.ok...))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s %v: err %v, want %q", tc.forced, tc.ok, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want || len(reasons) != tc.reasons {
			t.Errorf("%s %v: got %s, %d reasons, %v; want %s, %d", tc.forced, tc.ok, got, len(reasons), err, tc.want, tc.reasons)
		}
	}
}

// TestProbeBackendsOnThisKernel runs the real feature probes: each backend
// either works or says which kernel feature is missing.
func TestProbeBackendsOnThisKernel(t *testing.T) {
	for _, b := range FunctionBackends {
		err := ProbeBackend(b, "kfree_skbmem")
		if err == nil {
			t.Logf("%s works on this kernel", b)
			continue
		}
		msg := err.Error()
		t.Logf("%s: %s", b, msg)
		if !strings.Contains(msg, "this kernel") && !strings.Contains(msg, "run skbtrace as root") {
			t.Errorf("%s: %q does not say what the kernel lacks", b, msg)
		}
	}
}
