package output

import "fmt"

// AttachedLine is bpftrace's line saying how many probes attached: in
// text "Attached 2 probes" (bpftrace 0.26 writes it on stderr), in JSON
// the first object of -f json (on stdout).
func AttachedLine(json bool, n int) string {
	if json {
		return fmt.Sprintf(`{"type": "attached_probes", "count": %d, "data": {"probes": %d}}`+"\n", n, n)
	}
	if n == 1 {
		return "Attached 1 probe\n"
	}
	return fmt.Sprintf("Attached %d probes\n", n)
}

// LostLine is bpftrace's report of events the buffer had no room for: in
// text "Lost 3 events", in JSON {"type": "lost_events", ...}.
func LostLine(json bool, n uint64) string {
	if json {
		return fmt.Sprintf(`{"type": "lost_events", "count": %d, "data": {"events": %d}}`+"\n", n, n)
	}
	return fmt.Sprintf("Lost %d events\n", n)
}
