package rules

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// A listing (nft -a list chain, iptables-nft -S) is run again for each
// drop, so that a rule's counters are the kernel's at the drop, except in
// a flood: past listingRuns runs of one listing within listingAge, the
// last is used again until listingAge has passed (its counters may then
// lag by that much).
const (
	listingAge  = time.Second
	listingRuns = 5
)

var listings struct {
	sync.Mutex
	m map[string]listing
}

type listing struct {
	out   []byte
	since time.Time // the window's start
	runs  int       // runs in the window
}

func listingKey(path, name string, args []string) string {
	return path + "\x00" + name + "\x00" + strings.Join(args, "\x00")
}

// forget drops a kept listing.
func forget(path, name string, args ...string) {
	listings.Lock()
	defer listings.Unlock()
	delete(listings.m, listingKey(path, name, args))
}

// cachedRun is runIn, its output used again in a flood (listingRuns).
func cachedRun(path, name string, args ...string) ([]byte, error) {
	key := listingKey(path, name, args)
	listings.Lock()
	l, ok := listings.m[key]
	listings.Unlock()
	now := time.Now()
	if ok && now.Sub(l.since) < listingAge && l.runs >= listingRuns {
		return l.out, nil
	}
	out, err := runIn(path, name, args...)
	if err != nil {
		return nil, err
	}
	if !ok || now.Sub(l.since) >= listingAge {
		l = listing{since: now}
	}
	l.out, l.runs = out, l.runs+1
	listings.Lock()
	defer listings.Unlock()
	if listings.m == nil || len(listings.m) > 1024 {
		listings.m = map[string]listing{}
	}
	listings.m[key] = l
	return out, nil
}

// runIn runs a command in the network namespace at path (its file:
// /run/netns/x, /proc/PID/ns/net), at most 5 s, and returns its stdout:
// the child is forked from a thread that entered the namespace.
func runIn(path string, name string, args ...string) ([]byte, error) {
	bin, err := exec.LookPath(name)
	if err != nil {
		return nil, fmt.Errorf("%s not found in PATH", name)
	}
	var out, errb bytes.Buffer
	err = inNetns(path, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Stdout, cmd.Stderr = &out, &errb
		return cmd.Run()
	})
	if err != nil {
		if msg := strings.TrimSpace(errb.String()); msg != "" {
			return nil, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, msg)
		}
		return nil, fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return out.Bytes(), nil
}
