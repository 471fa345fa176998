package rules

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// tcActs names the classic tc action (gact drop, police over its limit,
// mirred to a device that is gone) that dropped a packet, by the kernel's
// own drop counters of the actions, which `tc -s -j filter show` reads: a
// drop is credited to the action whose count rose since the last read, on
// the device and hook of the drop; where several rose, it says so. BPF
// programs are named by their verdicts, not here.
type tcActs struct {
	mu     sync.Mutex
	counts map[string]uint64 // by action key: drops at the last read
	credit map[string]uint64
}

// tcAction is one action of one filter, as the name prints it.
type tcAction struct {
	key   string
	dev   string
	hook  string // ingress or egress
	qdisc string // clsact or ingress
	// filter: protocol, pref, kind, handle; action: order, kind, and what
	// it does.
	protocol, kind, handle string
	pref, order, chain     int
	action                 string
	drops                  uint64
}

type tcFilterJSON struct {
	Protocol string `json:"protocol"`
	Pref     int    `json:"pref"`
	Kind     string `json:"kind"`
	Chain    int    `json:"chain"`
	Options  struct {
		Handle  json.RawMessage `json:"handle"`
		Fh      string          `json:"fh"`
		Actions []tcActionJSON  `json:"actions"`
	} `json:"options"`
}

type tcActionJSON struct {
	Order   int    `json:"order"`
	Kind    string `json:"kind"`
	Control struct {
		Type string `json:"type"`
	} `json:"control_action"`
	Mirred    string `json:"mirred_action"`
	Direction string `json:"direction"`
	ToDev     string `json:"to_dev"`
	Rate      string `json:"rate"`
	Burst     string `json:"burst"`
	Index     int    `json:"index"`
	Stats     struct {
		Drops uint64 `json:"drops"`
	} `json:"stats"`
}

// readTC reads the actions of a device's filters on a hook, in the
// namespace at nsPath; qdisc says which one holds the hook.
func readTC(nsPath, dev, hook string) ([]tcAction, string, error) {
	qout, err := runIn(nsPath, "tc", "-j", "qdisc", "show", "dev", dev)
	if err != nil {
		return nil, "", err
	}
	var qdiscs []struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(qout, &qdiscs); err != nil {
		return nil, "", fmt.Errorf("tc qdisc show dev %s: %w", dev, err)
	}
	qdisc := ""
	for _, q := range qdiscs {
		if q.Kind == "clsact" || q.Kind == "ingress" && hook == "ingress" {
			qdisc = q.Kind
		}
	}
	if qdisc == "" {
		return nil, "", nil
	}
	out, err := runIn(nsPath, "tc", "-s", "-j", "filter", "show", "dev", dev, hook)
	if err != nil {
		return nil, qdisc, err
	}
	acts, err := parseTCFilters(out, dev, hook, qdisc)
	return acts, qdisc, err
}

// parseTCFilters reads tc -s -j filter show's output: each filter's actions.
func parseTCFilters(out []byte, dev, hook, qdisc string) ([]tcAction, error) {
	var filters []tcFilterJSON
	if err := json.Unmarshal(out, &filters); err != nil {
		return nil, fmt.Errorf("tc filter show dev %s %s: %w", dev, hook, err)
	}
	var acts []tcAction
	for _, f := range filters {
		handle := f.Options.Fh
		if len(f.Options.Handle) > 0 {
			var h any
			if json.Unmarshal(f.Options.Handle, &h) == nil {
				switch h := h.(type) {
				case float64:
					handle = "0x" + strconv.FormatUint(uint64(h), 16)
				case string:
					handle = h
				}
			}
		}
		for _, a := range f.Options.Actions {
			t := tcAction{dev: dev, hook: hook, qdisc: qdisc, protocol: f.Protocol, kind: f.Kind, handle: handle,
				pref: f.Pref, order: a.Order, chain: f.Chain, action: describeAction(a), drops: a.Stats.Drops}
			t.key = fmt.Sprintf("%s/%s/%d/%d/%s/%s/%d/%s/%d", dev, hook, f.Pref, f.Chain, f.Kind, handle, a.Order, a.Kind, a.Index)
			acts = append(acts, t)
		}
	}
	return acts, nil
}

// describeAction is an action as tc prints its first line, shortened:
// gact drop, police rate 8Kbit burst 1Kb drop, mirred (egress redirect
// to device x) stolen.
func describeAction(a tcActionJSON) string {
	switch a.Kind {
	case "gact":
		return "gact " + a.Control.Type
	case "police":
		s := "police"
		if a.Rate != "" {
			s += " rate " + a.Rate
		}
		if a.Burst != "" {
			s += " burst " + a.Burst
		}
		return s + " " + a.Control.Type
	case "mirred":
		return fmt.Sprintf("mirred (%s %s to device %s) %s", a.Direction, a.Mirred, a.ToDev, a.Control.Type)
	}
	return strings.TrimSpace(a.Kind + " " + a.Control.Type)
}

// start reads the counters (ns is the namespace's inode, in decimal) of a namespace's devices with a clsact or
// ingress qdisc, so that the first drop has counts to compare.
func (t *tcActs) start(ns, nsPath string) {
	qout, err := runIn(nsPath, "tc", "-j", "qdisc", "show")
	if err != nil {
		return
	}
	var qdiscs []struct {
		Kind string `json:"kind"`
		Dev  string `json:"dev"`
	}
	if json.Unmarshal(qout, &qdiscs) != nil {
		return
	}
	for _, q := range qdiscs {
		if q.Kind != "clsact" && q.Kind != "ingress" {
			continue
		}
		for _, hook := range []string{"ingress", "egress"} {
			if hook == "egress" && q.Kind != "clsact" {
				continue
			}
			acts, _, err := readTC(nsPath, q.Dev, hook)
			if err != nil {
				continue
			}
			t.mu.Lock()
			t.update(ns, acts)
			t.mu.Unlock()
		}
	}
}

// update credits the drops counted since the last read.
func (t *tcActs) update(ns string, acts []tcAction) {
	if t.counts == nil {
		t.counts, t.credit = map[string]uint64{}, map[string]uint64{}
	}
	for _, a := range acts {
		k := ns + "\x00" + a.key
		if prev, ok := t.counts[k]; ok && a.drops > prev {
			t.credit[k] += a.drops - prev
		}
		t.counts[k] = a.drops
	}
}

// name names the action that dropped a packet on dev's hook: exactly one
// action with credit; how many have it otherwise.
func (t *tcActs) name(ns, nsPath, dev, hook string) (tcAction, int, string, error) {
	acts, qdisc, err := readTC(nsPath, dev, hook)
	if err != nil {
		return tcAction{}, 0, qdisc, err
	}
	a, n := t.credited(ns, acts)
	return a, n, qdisc, nil
}

// credited credits the drops counted since the last read and takes one
// from the one action with credit: how many have credit otherwise.
func (t *tcActs) credited(ns string, acts []tcAction) (tcAction, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.update(ns, acts)
	var hit []tcAction
	for _, a := range acts {
		if t.credit[ns+"\x00"+a.key] > 0 {
			hit = append(hit, a)
		}
	}
	if len(hit) != 1 {
		return tcAction{}, len(hit)
	}
	t.credit[ns+"\x00"+hit[0].key]--
	return hit[0], 1
}
