package rules

import (
	"sort"
	"sync"
	"time"
)

// tcActs names the classic tc action (gact drop, police over its limit,
// mirred to a device that is down) that dropped a packet, by the kernel's
// own counters of the actions, read over rtnetlink (tcnl.go): a drop is
// credited to the action whose count rose since the last read, on the
// device and hook of the drop; where several rose, it says so. BPF
// programs are named by their verdicts, not here.
type tcActs struct {
	mu     sync.Mutex
	counts map[string]uint64 // by action key: drops at the last read
	credit map[string]uint64
	// started: namespaces read at start, whose actions not seen then were
	// made after it (their drops all count).
	started map[string]bool
}

// tcAction is one action of one filter, as the name prints it.
type tcAction struct {
	key   string
	dev   string
	hook  string // ingress or egress
	qdisc string // clsact or ingress
	// filter: protocol, pref, kind, handle; action: order, and what it
	// does.
	protocol, kind, handle string
	pref, order, chain     int
	action                 string
	drops                  uint64
	// first and last are when the action was first and last used, as the
	// kernel keeps them (in 10 ms steps); zero where it says none.
	first, last time.Time
}

// start reads the counters (ns is the namespace's inode, in decimal) of a
// namespace's devices with a clsact or ingress qdisc, so that the first
// drop has counts to compare.
func (t *tcActs) start(ns, nsPath string) {
	acts, err := readTC(nsPath, "")
	if err != nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.update(ns, acts)
	if t.started == nil {
		t.started = map[string]bool{}
	}
	t.started[ns] = true
}

// update credits the drops counted since the last read.
func (t *tcActs) update(ns string, acts []tcAction) {
	if t.counts == nil {
		t.counts, t.credit = map[string]uint64{}, map[string]uint64{}
	}
	for _, a := range acts {
		k := ns + "\x00" + a.key
		prev, ok := t.counts[k]
		if ok || t.started[ns] {
			if a.drops > prev {
				t.credit[k] += a.drops - prev
			}
		}
		t.counts[k] = a.drops
	}
}

// name names the action that dropped a packet on dev's hook: exactly one
// action with credit; how many have it otherwise; and the hook's actions,
// how many, and the qdisc that holds it ("": none).
func (t *tcActs) name(ns, nsPath, dev, hook string) (a tcAction, credited, onHook int, qdisc string, err error) {
	acts, err := readTC(nsPath, dev)
	if err != nil {
		return tcAction{}, 0, 0, "", err
	}
	for _, x := range acts {
		if x.dev == dev && x.hook == hook {
			onHook++
			qdisc = x.qdisc
		}
	}
	a, credited = t.credited(ns, dev, hook, acts)
	return a, credited, onHook, qdisc, nil
}

// credited credits the drops counted since the last read and takes one
// from the one action of dev's hook with credit, or from the one of
// several whose uses all came before the others' (usedBefore): how many
// have credit otherwise.
func (t *tcActs) credited(ns, dev, hook string, acts []tcAction) (tcAction, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.update(ns, acts)
	var hit []tcAction
	for _, a := range acts {
		if a.dev == dev && a.hook == hook && t.credit[ns+"\x00"+a.key] > 0 {
			hit = append(hit, a)
		}
	}
	if len(hit) > 1 {
		if first, ok := usedBefore(hit); ok {
			hit = []tcAction{first}
		}
	}
	if len(hit) != 1 {
		return tcAction{}, len(hit)
	}
	t.credit[ns+"\x00"+hit[0].key]--
	return hit[0], 1
}

// useSlack is how far apart two actions' uses must be to be ordered: the
// kernel keeps them in jiffies and says them in 10 ms steps.
const useSlack = 30 * time.Millisecond

// usedBefore is, of several actions with drops not yet named, the one
// whose every use came before any use of the others (its last before
// their first): its drops are the ones printed first, the drops coming in
// the kernel's order. None where their uses overlap, or a time is not
// known.
func usedBefore(hit []tcAction) (tcAction, bool) {
	sorted := append([]tcAction(nil), hit...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].last.Before(sorted[j].last) })
	e := sorted[0]
	if e.last.IsZero() {
		return tcAction{}, false
	}
	for _, h := range sorted[1:] {
		if h.first.IsZero() || !h.first.After(e.last.Add(useSlack)) {
			return tcAction{}, false
		}
	}
	return e, true
}
