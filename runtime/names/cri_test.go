package names

import (
	"context"
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skbtrace/skbtrace/internal/k8stest"
	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// countingCRI counts the PodSandboxStatus calls made through it.
type countingCRI struct {
	runtimeapi.RuntimeServiceClient
	status atomic.Int32
}

// PodSandboxStatus counts the call and passes it on.
func (c *countingCRI) PodSandboxStatus(ctx context.Context, in *runtimeapi.PodSandboxStatusRequest, opts ...grpc.CallOption) (*runtimeapi.PodSandboxStatusResponse, error) {
	c.status.Add(1)
	return c.RuntimeServiceClient.PodSandboxStatus(ctx, in, opts...)
}

// TestCRI runs two pods through containerd's CRI and names them by their
// network namespaces, their container's PID and cgroup and their host-side
// veths; matches them by pod glob and namespace; checks that a steady poll
// asks no sandbox status again; and, with no CRI, names them from their
// cgroup paths alone (pod UID, container ID).
func TestCRI(t *testing.T) {
	needRoot(t)
	c := k8stest.Containerd(t)
	web := c.RunPod(t, "ns-a", "web-0")
	db := c.RunPod(t, "ns-b", "db-0")

	r := refreshed(t, Options{CRISocket: c.Socket, Warn: t.Logf})
	for _, l := range r.Status() {
		t.Log(l)
	}
	want := fmt.Sprintf("CRI unix://%s (containerd): 2 pod sandboxes", c.Socket)
	if !statusHas(r, want) {
		t.Errorf("Status %q, want a line %q", r.Status(), want)
	}
	for _, p := range []*k8stest.Pod{web, db} {
		label := p.Namespace + "/" + p.Name
		id, ok := r.Netns(p.NetNSInode)
		if !ok || id.Namespace != p.Namespace || id.Pod != p.Name || id.PodUID != p.UID ||
			id.Runtime != "containerd" || strings.Join(id.Containers, ",") != k8stest.ContainerName ||
			id.Container != k8stest.ContainerName || id.Label() != label {
			t.Errorf("Netns(%d) = %+v, %v; want pod %s with container %s", p.NetNSInode, id, ok, label, k8stest.ContainerName)
		}
		if id, ok := r.Pid(uint32(p.PID)); !ok || id.Container != k8stest.ContainerName || id.ContainerID != p.ContainerID || id.Label() != label {
			t.Errorf("Pid(%d) = %+v, %v; want %s's %s", p.PID, id, ok, label, k8stest.ContainerName)
		}
		cg := cgroupInode(t, uint32(p.PID))
		if id, ok := r.Cgroup(cg); !ok || id.Container != k8stest.ContainerName || id.PodUID != p.UID {
			t.Errorf("Cgroup(%d) = %+v, %v; want %s's %s", cg, id, ok, label, k8stest.ContainerName)
		}
		if id, ok := r.Dev(p.HostVeth); !ok || id.Label() != label {
			t.Errorf("Dev(%s) = %+v, %v; want %s", p.HostVeth, id, ok, label)
		}
		a := netip.MustParseAddr(p.IP)
		for _, a := range []netip.Addr{a, netip.AddrFrom16(a.As16())} {
			if id, ok := r.Addr(a); !ok || id.Label() != label {
				t.Errorf("Addr(%s) = %+v, %v; want %s", a, id, ok, label)
			}
		}
	}

	match := func(s Selector) string {
		var got []string
		for _, id := range r.Match(s) {
			got = append(got, id.Label())
		}
		sort.Strings(got)
		return strings.Join(got, " ")
	}
	for _, m := range []struct {
		s    Selector
		want string
	}{
		{Selector{Pods: []string{"ns-a/web-*"}}, "ns-a/web-0"},
		{Selector{Pods: []string{"db-0"}}, "ns-b/db-0"},
		{Selector{Pods: []string{"*/web-?", "ns-b/*"}}, "ns-a/web-0 ns-b/db-0"},
		{Selector{Namespaces: []string{"ns-*"}}, "ns-a/web-0 ns-b/db-0"},
		{Selector{Namespaces: []string{"ns-b"}, Containers: []string{"ma*"}}, "ns-b/db-0"},
		{Selector{Pods: []string{"ns-a/*"}, Namespaces: []string{"ns-b"}}, ""},
		{Selector{Pods: []string{"ns-a/*"}, Netns: []string{fmt.Sprint(db.NetNSInode)}}, "ns-a/web-0 ns-b/db-0"},
	} {
		if got := match(m.s); got != m.want {
			t.Errorf("Match(%+v) = %q, want %q", m.s, got, m.want)
		}
	}

	// A steady poll: one list, no status calls for the sandboxes known.
	r.refreshMu.Lock()
	counter := &countingCRI{RuntimeServiceClient: r.cri.client}
	r.cri.client = counter
	r.refreshMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if n := counter.status.Load(); n != 0 {
		t.Errorf("%d PodSandboxStatus calls in a refresh with no new sandbox, want 0", n)
	}

	t.Run("no CRI", func(t *testing.T) {
		var warned []string
		r := refreshed(t, Options{CRISocket: c.Dir + "/none.sock", Warn: func(f string, a ...any) {
			warned = append(warned, fmt.Sprintf(f, a...))
		}})
		if len(warned) == 0 || !strings.Contains(warned[0], "none.sock") {
			t.Errorf("Warn said %q, want the missing socket", warned)
		}
		id, ok := r.Netns(web.NetNSInode)
		if !ok || id.PodUID != web.UID || id.Label() != "pod:"+web.UID {
			t.Errorf("without the CRI, Netns(%d) = %+v, %v; want pod UID %s from the cgroup path", web.NetNSInode, id, ok, web.UID)
		}
		if id, ok := r.Pid(uint32(web.PID)); !ok || id.ContainerID != web.ContainerID {
			t.Errorf("without the CRI, Pid(%d) = %+v, %v", web.PID, id, ok)
		}
	})
}
