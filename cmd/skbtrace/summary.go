package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/skbtrace/skbtrace/runtime/output"
	"github.com/skbtrace/skbtrace/runtime/session"
)

// exitSummary says at exit what skbtrace did not see (session.Misses):
// runs of its programs the kernel skipped, records lost, functions not
// attached, captures cut to the snap length, and what other parts add.
// Lines go to stderr, each counted kind that is not zero; -v says the
// functions and, where nothing was missed, that. With -f json a "misses"
// record goes to w too, beside the "lost" one. A kind this kernel does not
// count is said once as such, never as 0 (for a bpftrace program, whose
// stderr is bpftrace's, only beside a miss counted).
func exitSummary(m *session.Misses, o options, kind outputKind, w, stderr io.Writer) {
	entries := m.Entries()
	// Records lost: the line and record of before, bpftrace's where the
	// program is bpftrace's.
	for _, e := range entries {
		if e.What != session.MissEventsLost || e.Uncounted {
			continue
		}
		buffer := strings.TrimSuffix(strings.TrimPrefix(e.Reason, "the "), " was full")
		switch {
		case kind.bpftrace:
			io.WriteString(map[bool]io.Writer{true: w, false: stderr}[o.format == "json"], output.LostLine(o.format == "json", e.Count))
		default:
			fmt.Fprintf(stderr, "skbtrace: %d events lost: the %s was full\n", e.Count, buffer)
			if o.format == "json" {
				fmt.Fprintf(w, "{\"data\":{\"buffer\":%q,\"events\":%d},\"type\":\"lost\"}\n", buffer, e.Count)
			}
		}
	}
	uncounted := 0
	for _, e := range entries {
		if e.Uncounted {
			uncounted++
		}
	}
	switch {
	case m.Any():
	case kind.bpftrace:
		// Nothing missed: a bpftrace program's stderr stays bpftrace's,
		// -v or not.
		return
	case !o.verbose && uncounted == 0:
		return
	}
	for _, l := range missLines(entries, o) {
		fmt.Fprintln(stderr, "skbtrace: "+l)
	}
	if !m.Any() && o.verbose {
		if uncounted > 0 {
			fmt.Fprintln(stderr, "skbtrace: nothing missed that this kernel counts")
		} else {
			fmt.Fprintln(stderr, "skbtrace: nothing missed: every run of the programs counted, no record lost, every function attached, no capture cut")
		}
	}
	if o.format == "json" && !kind.bpftrace {
		writeMissesRecord(w, entries, o.verbose)
	}
}

// missLines are the summary's lines: one for each probe and reason of the
// programs' skipped runs, one for the functions not attached (by reason;
// under -v a line for each reason naming them), one for captures cut,
// one for each entry another part added, and one for each kind not
// counted here.
func missLines(entries []session.Miss, o options) []string {
	var lines, notCounted []string
	funcs := map[string][]string{}
	var nfuncs uint64
	for _, e := range entries {
		switch {
		case e.Uncounted:
			notCounted = append(notCounted, "not counted on this kernel: "+e.Reason)
		case e.Count == 0 || e.What == session.MissEventsLost:
		case e.What == session.MissProgramsSkipped:
			lines = append(lines, fmt.Sprintf("the kernel skipped %d %s of %s (%s)", e.Count, plural(int(e.Count), "run"), e.Probe, e.Reason))
		case e.What == session.MissFunctionsSkipped:
			nfuncs += e.Count
			funcs[e.Reason] = append(funcs[e.Reason], e.Detail...)
		case e.What == session.MissCapturesTruncated:
			lines = append(lines, fmt.Sprintf("%d captured %s cut to the snap length (--snaplen %d)", e.Count, plural(int(e.Count), "frame"), o.snaplen))
		default:
			l := fmt.Sprintf("%d %s", e.Count, strings.ReplaceAll(e.What, "_", " "))
			if e.Probe != "" {
				l += " of " + e.Probe
			}
			if e.Reason != "" {
				l += ": " + e.Reason
			}
			lines = append(lines, l)
		}
	}
	if nfuncs > 0 {
		reasons := slices.Sorted(maps.Keys(funcs))
		var parts []string
		for _, r := range reasons {
			parts = append(parts, fmt.Sprintf("%d: %s", len(funcs[r]), r))
		}
		lines = append(lines, fmt.Sprintf("%d %s not attached (%s)", nfuncs, plural(int(nfuncs), "function"), strings.Join(parts, "; ")))
		if o.verbose {
			for _, r := range reasons {
				lines = append(lines, fmt.Sprintf("  not attached, %s: %s", r, strings.Join(slices.Sorted(slices.Values(funcs[r])), " ")))
			}
		}
	}
	return append(lines, notCounted...)
}

// missRecord is one entry of the "misses" JSON record, its keys in
// alphabetical order as the other records'.
type missRecord struct {
	Count     *uint64  `json:"count,omitempty"`
	Counted   *bool    `json:"counted,omitempty"`
	Functions []string `json:"functions,omitempty"`
	Probe     string   `json:"probe,omitempty"`
	Reason    string   `json:"reason,omitempty"`
	What      string   `json:"what"`
}

// writeMissesRecord writes {"data":{"misses":[...]},"type":"misses"}: each
// entry's kind, probe, reason and count; a kind not counted here has
// "counted":false and no count; with -v the functions not attached.
func writeMissesRecord(w io.Writer, entries []session.Miss, verbose bool) {
	recs := []missRecord{}
	for _, e := range entries {
		r := missRecord{What: e.What, Probe: e.Probe, Reason: e.Reason}
		if e.Uncounted {
			f := false
			r.Counted = &f
		} else {
			n := e.Count
			r.Count = &n
		}
		if verbose && e.What == session.MissFunctionsSkipped {
			r.Functions = slices.Sorted(slices.Values(e.Detail))
		}
		recs = append(recs, r)
	}
	b, err := json.Marshal(struct {
		Data struct {
			Misses []missRecord `json:"misses"`
		} `json:"data"`
		Type string `json:"type"`
	}{Data: struct {
		Misses []missRecord `json:"misses"`
	}{recs}, Type: "misses"})
	if err != nil {
		return
	}
	w.Write(append(b, '\n'))
}
