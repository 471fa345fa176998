package names

import (
	"fmt"
	"strings"
	"testing"
)

// TestIPNetns: a namespace `ip netns add` made is named by Netns, and
// matched by its name, its path and its inode.
func TestIPNetns(t *testing.T) {
	name, ino := addNetns(t, "skbtrace-names")
	r := refreshed(t, Options{})
	id, ok := r.Netns(ino)
	if !ok || id.NetnsName != name || id.Label() != "netns:"+name {
		t.Fatalf("Netns(%d) = %+v, %v; want NetnsName %q", ino, id, ok, name)
	}
	for _, spec := range []string{name, "/run/netns/" + name, fmt.Sprint(ino), fmt.Sprintf("net:[%d]", ino)} {
		m := r.Match(Selector{Netns: []string{spec}})
		if len(m) != 1 || m[ino].NetnsName != name {
			t.Errorf("Match(Netns %q) = %v, want only %d named %s", spec, m, ino, name)
		}
	}
	// An inode not known yet matches as itself; a name that does not exist
	// matches nothing.
	if m := r.Match(Selector{Netns: []string{"12345"}}); len(m) != 1 || m[12345].Label() != "" {
		t.Errorf("Match(Netns 12345) = %v", m)
	}
	if m := r.Match(Selector{Netns: []string{"skbtrace-names-none"}}); len(m) != 0 {
		t.Errorf("Match of a missing name = %v", m)
	}
	// Pod and container criteria ANDed: the ip netns has no pod.
	if m := r.Match(Selector{Pods: []string{"*"}}); m[ino].NetnsName != "" {
		t.Errorf("Pods * matched the ip netns %s", name)
	}
	if !statusHas(r, "ip netns /run/netns: ") {
		t.Errorf("no ip netns line in %q", r.Status())
	}
}

// TestParseNetns reads the spec forms and says what is wrong with a bad one.
func TestParseNetns(t *testing.T) {
	for spec, want := range map[string]NetnsSpec{
		"blue":             {Name: "blue"},
		"/proc/1/ns/net":   {Path: "/proc/1/ns/net"},
		"4026531840":       {Inode: 4026531840},
		"net:[4026531840]": {Inode: 4026531840},
	} {
		if got, err := ParseNetns(spec); err != nil || got != want {
			t.Errorf("ParseNetns(%q) = %+v, %v; want %+v", spec, got, err, want)
		}
	}
	for _, bad := range []string{"", "0", "..", "99999999999999999999999"} {
		if _, err := ParseNetns(bad); err == nil || !strings.Contains(err.Error(), "namespace") {
			t.Errorf("ParseNetns(%q): error %v, want one naming the namespace", bad, err)
		}
	}
	if err := (Selector{Pods: []string{"default/[web"}}).Check(); err == nil {
		t.Error("Check accepted a bad pod glob")
	}
	if err := (Selector{Pods: []string{"default/web-*"}, Containers: []string{"a?"}, Netns: []string{"blue"}}).Check(); err != nil {
		t.Errorf("Check: %v", err)
	}
}
