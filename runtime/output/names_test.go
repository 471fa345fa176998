package output

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/lang/types"
)

// testNames knows two pods by netns inode, a host veth by name, a pod by
// its address and a process by pid.
type testNames struct{}

var (
	podA = Name{Namespace: "shop", Pod: "a", Container: "web", Label: "shop/a"}
	podB = Name{Namespace: "shop", Pod: "b", Container: "db", Label: "shop/b"}
)

func (testNames) Netns(inode uint64) (Name, bool) {
	switch inode {
	case 100:
		return podA, true
	case 200:
		return podB, true
	case 300:
		return Name{Label: "netns:blue"}, true
	}
	return Name{}, false
}
func (testNames) Pid(pid uint32) (Name, bool) { return podA, pid == 42 }
func (testNames) Dev(name string) (Name, bool) {
	return podB, name == "veth1234"
}
func (testNames) Addr(a netip.Addr) (Name, bool) {
	return podA, a == netip.MustParseAddr("10.244.0.5")
}

// namedEvent is a print record of dev, netns, pod, podns, container, pid and
// saddr.
func namedEvent() *codegen.Event {
	netnsT := func(f types.Fmt) types.Type { return types.Type{Kind: types.Int, Size: 4, Fmt: f} }
	args := []codegen.EventArg{
		{Name: "dev", Type: types.Type{Kind: types.String, Size: 16, Fmt: types.FmtDev}, Offset: 40, Size: 16},
		{Name: "netns", Type: netnsT(types.FmtNetns), Offset: 56, Size: 8},
		{Name: "pod", Type: netnsT(types.FmtPod), Offset: 64, Size: 8},
		{Name: "podns", Type: netnsT(types.FmtPodNS), Offset: 72, Size: 8},
		{Name: "container", Type: netnsT(types.FmtContainer), Offset: 80, Size: 8},
		{Name: "pid", Type: types.Type{Kind: types.Int, Size: 4, Fmt: types.FmtPid}, Offset: 88, Size: 8},
		{Name: "saddr", Type: types.IP, Offset: 96, Size: codegen.AddrSize},
	}
	return &codegen.Event{ID: 0, Kind: codegen.EventPrint, Probe: "net_dev_queue", Args: args, Size: 96 + codegen.AddrSize}
}

func namedRecord(ev *codegen.Event, skb, ns uint64, dev string, inode uint64, pid uint32, addr string) []byte {
	b := make([]byte, ev.Size)
	le := binary.LittleEndian
	le.PutUint64(b[codegen.PrintTime:], ns)
	le.PutUint64(b[codegen.PrintSkb:], skb)
	copy(b[40:56], dev)
	for _, off := range []int{56, 64, 72, 80} {
		le.PutUint64(b[off:], inode)
	}
	le.PutUint64(b[88:], uint64(pid))
	a := netip.MustParseAddr(addr).As4()
	copy(b[96:], a[:])
	b[96+16] = 4
	return b
}

// TestNamesText checks what text prints of the names: the IDs followed by
// their labels, pod, podns and container as names, and the IDs alone
// where nothing is known or no Names is set.
func TestNamesText(t *testing.T) {
	ev := namedEvent()
	v := NewValues()
	v.SetNames(testNames{})
	p := newPrinter(nil, []*codegen.Event{ev}, v)
	p.f = text{p}
	got := string(p.appendHop(nil, "net_dev_queue", ev, namedRecord(ev, 0xa00, 0, "veth1234", 100, 42, "10.244.0.5")))
	want := "net_dev_queue            dev=veth1234 (shop/b) netns=100 (shop/a) pod=a podns=shop container=web pid=42 (shop/a) saddr=10.244.0.5 (shop/a)\n"
	if got != want {
		t.Errorf("known:\n%q\nwant\n%q", got, want)
	}
	got = string(p.appendHop(nil, "net_dev_queue", ev, namedRecord(ev, 0xa00, 0, "eth0", 300, 7, "10.0.0.1")))
	want = "net_dev_queue            dev=eth0 netns=300 (netns:blue) pod=netns:blue podns=- container=- pid=7 saddr=10.0.0.1\n"
	if got != want {
		t.Errorf("an ip netns:\n%q\nwant\n%q", got, want)
	}
	got = string(p.appendHop(nil, "net_dev_queue", ev, namedRecord(ev, 0xa00, 0, "eth0", 400, 7, "10.0.0.1")))
	want = "net_dev_queue            dev=eth0 netns=400 pod=netns:400 podns=- container=- pid=7 saddr=10.0.0.1\n"
	if got != want {
		t.Errorf("unknown:\n%q\nwant\n%q", got, want)
	}
	plain := newPrinter(nil, []*codegen.Event{ev}, NewValues())
	got = string(plain.appendHop(nil, "net_dev_queue", ev, namedRecord(ev, 0xa00, 0, "veth1234", 100, 42, "10.244.0.5")))
	want = "net_dev_queue            dev=veth1234 netns=100 pod=netns:100 podns=- container=- pid=42 saddr=10.244.0.5\n"
	if got != want {
		t.Errorf("without names:\n%q\nwant\n%q", got, want)
	}
}

// TestNamesJSON checks that JSON keeps the IDs as they were (numbers) and
// gives the record's pod, namespace and container as fields of its own.
func TestNamesJSON(t *testing.T) {
	ev := namedEvent()
	v := NewValues()
	v.SetNames(testNames{})
	var out bytes.Buffer
	p, err := New(&out, []*codegen.Event{ev}, Config{Format: "json", Values: v})
	if err != nil {
		t.Fatal(err)
	}
	line := p.f.Record(nil, ev, namedRecord(ev, 0xa00, 0, "veth1234", 200, 42, "10.244.0.5"))
	var got struct {
		Pod, Namespace, Container string
		Data                      map[string]any
	}
	if err := json.Unmarshal(line, &got); err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	if got.Pod != "b" || got.Namespace != "shop" || got.Container != "db" {
		t.Errorf("pod %q namespace %q container %q, want b, shop, db (the netns's, before the device's or the pid's): %s", got.Pod, got.Namespace, got.Container, line)
	}
	if got.Data["netns"] != float64(200) || got.Data["pid"] != float64(42) || got.Data["dev"] != "veth1234" || got.Data["saddr"] != "10.244.0.5" || got.Data["pod"] != "b" {
		t.Errorf("data %v: want the IDs plain, pod as its name", got.Data)
	}
	line = p.f.Record(nil, ev, namedRecord(ev, 0xa00, 0, "eth0", 300, 7, "10.0.0.1"))
	var top map[string]any
	if err := json.Unmarshal(line, &top); err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	for _, k := range []string{"pod", "namespace", "container"} {
		if _, ok := top[k]; ok {
			t.Errorf("an ip netns's record has a %q field: %s", k, line)
		}
	}
}

// TestNamesBlocks checks the timeline's and the graph's headers: the pods
// a packet was in, in order, each once; in JSON, "pods".
func TestNamesBlocks(t *testing.T) {
	ev := namedEvent()
	v := NewValues()
	v.SetNames(testNames{})
	p := newPrinter(nil, []*codegen.Event{ev}, v)
	for _, json := range []bool{false, true} {
		tl := newTimeline(p.boot, json)
		for i, inode := range []uint64{100, 100, 400, 200} {
			tl.add(p, ev, namedRecord(ev, 0xa00, uint64(1_000_000+i), "eth0", inode, 7, "10.0.0.1"))
		}
		got := string(tl.flush(nil, time.Time{}, true))
		want := "skb 0xa00 at " + p.boot.Add(time.Millisecond).Format("15:04:05.000000") + " (shop/a > shop/b)\n"
		if json {
			want = `"pods":["shop/a","shop/b"]`
		}
		if !strings.Contains(got, want) {
			t.Errorf("timeline (json %v):\n%s\nwant %q", json, got, want)
		}
		gr := newGraph(p.boot, json)
		gr.add(p, ev, namedRecord(ev, 0xb00, 2_000_000, "eth0", 200, 7, "10.0.0.1"))
		got = string(gr.flush(nil, time.Time{}, true))
		want = " (shop/b)\n"
		if json {
			want = `"pods":["shop/b"]`
		}
		if !strings.Contains(got, want) {
			t.Errorf("graph (json %v):\n%s\nwant %q", json, got, want)
		}
	}
}

// TestNamesPcapngComment checks what a hop's comment says of its
// namespace: the pod and container, a container's label, an ip netns name.
func TestNamesPcapngComment(t *testing.T) {
	for _, c := range []struct {
		n    Name
		want string
	}{
		{podA, " pod=shop/a container=web"},
		{Name{Container: "web", Label: "podman:web"}, " container=podman:web"},
		{Name{Label: "netns:blue"}, " netns-name=blue"},
	} {
		if got := string(appendNameComment(nil, c.n)); got != c.want {
			t.Errorf("%+v: %q, want %q", c.n, got, c.want)
		}
	}
}
