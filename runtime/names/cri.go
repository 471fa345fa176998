package names

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// criCallTimeout bounds each CRI call: a hung runtime must not hold up the
// refresh of the other sources.
const criCallTimeout = 2 * time.Second

// defaultCRISockets are where the runtimes listen when nothing says
// otherwise: containerd, CRI-O, k3s's containerd, and their /var/run
// spellings (the same files where /var/run links to /run); then the same
// under /host/run, where the DaemonSet mounts the node's /run.
var defaultCRISockets = []string{
	"/run/containerd/containerd.sock",
	"/run/crio/crio.sock",
	"/run/k3s/containerd/containerd.sock",
	"/var/run/containerd/containerd.sock",
	"/var/run/crio/crio.sock",
	"/var/run/k3s/containerd/containerd.sock",
	"/host/run/containerd/containerd.sock",
	"/host/run/crio/crio.sock",
	"/host/run/k3s/containerd/containerd.sock",
}

// criPod is one ready pod sandbox and its containers.
type criPod struct {
	ID, Name, Namespace, UID string
	Pid                      int    // the sandbox's (pause) process, 0 if unknown
	Netns                    uint64 // its network namespace's inode, 0 if unknown or the host's
	NetnsPath                string // a path that opens that namespace
	IPs                      []netip.Addr
	Containers               []criContainer
}

// criContainer is one of a sandbox's containers that has not exited.
type criContainer struct{ ID, Name string }

// sandboxStatus is what PodSandboxStatus said of a sandbox, kept while the
// sandbox lives so a steady poll costs one list, not one status per pod.
type sandboxStatus struct {
	pid       int
	netns     uint64
	netnsPath string
	ips       []netip.Addr // the pod's IP and additional IPs
	host      bool         // host network: its namespace is the node's
}

// criSource lists pod sandboxes and containers over the CRI's gRPC API.
type criSource struct {
	configured string // Options.CRISocket
	proc       string

	endpoint string // the endpoint in use, "unix:///..."
	conn     *grpc.ClientConn
	client   runtimeapi.RuntimeServiceClient
	runtime  string // VersionResponse.RuntimeName: "containerd", "cri-o"
	status   map[string]sandboxStatus
}

// endpoint makes a "unix://" endpoint of a socket path.
func criEndpoint(s string) string {
	if strings.Contains(s, "://") {
		return s
	}
	return "unix://" + s
}

// candidates returns the endpoints to try: the configured one alone, else
// CONTAINER_RUNTIME_ENDPOINT, then the default sockets that exist (each file
// once). missing names the default sockets that do not exist.
func (c *criSource) candidates() (eps []string, missing []string) {
	if c.configured != "" {
		return []string{criEndpoint(c.configured)}, nil
	}
	if env := os.Getenv("CONTAINER_RUNTIME_ENDPOINT"); env != "" {
		eps = append(eps, criEndpoint(env))
	}
	seen := map[string]bool{}
	for _, p := range defaultCRISockets {
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			missing = append(missing, p)
			continue
		}
		if !seen[real] {
			seen[real] = true
			eps = append(eps, criEndpoint(p))
		}
	}
	return eps, missing
}

// connect opens a client of endpoint and asks its version: a socket that
// answers but does not serve the CRI (Docker's containerd, whose CRI plugin
// is off) is an error saying so.
func (c *criSource) connect(ctx context.Context, endpoint string) error {
	conn, err := grpc.NewClient(endpoint,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20)))
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", endpoint, err)
	}
	client := runtimeapi.NewRuntimeServiceClient(conn)
	cctx, cancel := context.WithTimeout(ctx, criCallTimeout)
	defer cancel()
	v, err := client.Version(cctx, &runtimeapi.VersionRequest{})
	if err != nil {
		conn.Close()
		if status.Code(err) == codes.Unimplemented {
			return fmt.Errorf("does not serve the CRI (a runtime without its CRI plugin?): %w", err)
		}
		return fmt.Errorf("asking its version: %w", err)
	}
	c.close()
	c.endpoint, c.conn, c.client = endpoint, conn, client
	c.runtime = criRuntimeName(v.GetRuntimeName())
	c.status = map[string]sandboxStatus{}
	return nil
}

// criRuntimeName is the Identity.Runtime of a CRI runtime's own name.
func criRuntimeName(n string) string {
	switch strings.ToLower(n) {
	case "cri-o", "crio":
		return "cri-o"
	case "":
		return "cri"
	}
	return strings.ToLower(n)
}

// close drops the connection.
func (c *criSource) close() {
	if c.conn != nil {
		c.conn.Close()
	}
	c.conn, c.client, c.endpoint = nil, nil, ""
}

// pods lists the ready pod sandboxes and their containers. It connects
// first where it is not connected, to the first candidate that answers.
// status is Status's line for the CRI; err says why nothing was listed.
func (c *criSource) pods(ctx context.Context) (pods []criPod, line string, err error) {
	if c.client == nil {
		eps, missing := c.candidates()
		if len(eps) == 0 {
			return nil, "CRI: no socket at " + strings.Join(missing, ", "), errNoCRISocket
		}
		var errs []string
		for _, ep := range eps {
			if err := c.connect(ctx, ep); err != nil {
				errs = append(errs, "CRI "+ep+": "+err.Error())
				continue
			}
			break
		}
		if c.client == nil {
			msg := strings.Join(errs, "; ")
			return nil, msg, errors.New(msg)
		}
	}
	pods, err = c.list(ctx)
	if err != nil {
		line := "CRI " + c.endpoint + ": " + err.Error()
		if c.configured == "" {
			c.close() // look again next time: the runtime may have moved
		}
		return nil, line, errors.New(line)
	}
	return pods, fmt.Sprintf("CRI %s (%s): %d pod sandboxes", c.endpoint, c.runtime, len(pods)), nil
}

// errNoCRISocket is pods' error where no socket exists.
var errNoCRISocket = errors.New("no CRI socket")

// list makes the calls of one refresh: the ready sandboxes, the status of
// each not seen before, the containers.
func (c *criSource) list(ctx context.Context) ([]criPod, error) {
	cctx, cancel := context.WithTimeout(ctx, criCallTimeout)
	defer cancel()
	sb, err := c.client.ListPodSandbox(cctx, &runtimeapi.ListPodSandboxRequest{
		Filter: &runtimeapi.PodSandboxFilter{State: &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY}},
	})
	if err != nil {
		return nil, fmt.Errorf("listing pod sandboxes: %w", err)
	}
	ctr, err := c.client.ListContainers(cctx, &runtimeapi.ListContainersRequest{})
	if err != nil {
		return nil, fmt.Errorf("listing containers: %w", err)
	}
	byPod := map[string][]criContainer{}
	for _, k := range ctr.GetContainers() {
		if k.GetState() == runtimeapi.ContainerState_CONTAINER_EXITED {
			continue
		}
		name := k.GetMetadata().GetName()
		if name == "" {
			name = k.GetLabels()["io.kubernetes.container.name"]
		}
		byPod[k.GetPodSandboxId()] = append(byPod[k.GetPodSandboxId()], criContainer{k.GetId(), name})
	}
	live := map[string]bool{}
	pods := make([]criPod, 0, len(sb.GetItems()))
	for _, s := range sb.GetItems() {
		id := s.GetId()
		live[id] = true
		md, labels := s.GetMetadata(), s.GetLabels()
		p := criPod{
			ID:         id,
			Name:       firstOf(md.GetName(), labels["io.kubernetes.pod.name"]),
			Namespace:  firstOf(md.GetNamespace(), labels["io.kubernetes.pod.namespace"]),
			UID:        firstOf(md.GetUid(), labels["io.kubernetes.pod.uid"]),
			Containers: byPod[id],
		}
		sort.Slice(p.Containers, func(i, j int) bool { return p.Containers[i].Name < p.Containers[j].Name })
		st, ok := c.status[id]
		if !ok && ctx.Err() == nil {
			st, ok = c.sandboxStatus(ctx, id)
			if ok {
				c.status[id] = st
			}
		}
		if ok && !st.host {
			p.Pid, p.Netns, p.NetnsPath, p.IPs = st.pid, st.netns, st.netnsPath, st.ips
		} else if ok {
			p.Pid = st.pid
		}
		pods = append(pods, p)
	}
	for id := range c.status {
		if !live[id] {
			delete(c.status, id)
		}
	}
	return pods, nil
}

// firstOf returns the first of its arguments that is not "".
func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// sandboxStatus asks for one sandbox's verbose status: the pid and network
// namespace path of its info JSON, the namespace's inode by stat(2) of that
// path or else of /proc/PID/ns/net. ok is false where the namespace is not
// known yet (to be asked again next refresh).
func (c *criSource) sandboxStatus(ctx context.Context, id string) (sandboxStatus, bool) {
	cctx, cancel := context.WithTimeout(ctx, criCallTimeout)
	defer cancel()
	r, err := c.client.PodSandboxStatus(cctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: id, Verbose: true})
	if err != nil {
		return sandboxStatus{}, false
	}
	var st sandboxStatus
	if r.GetStatus().GetLinux().GetNamespaces().GetOptions().GetNetwork() == runtimeapi.NamespaceMode_NODE {
		st.host = true
	}
	var info struct {
		Pid         int `json:"pid"`
		RuntimeSpec struct {
			Linux struct {
				Namespaces []struct{ Type, Path string }
			}
		} `json:"runtimeSpec"`
	}
	if s := r.GetInfo()["info"]; s != "" {
		json.Unmarshal([]byte(s), &info)
	}
	st.pid = info.Pid
	if st.host {
		return st, true
	}
	if net := r.GetStatus().GetNetwork(); net != nil {
		ips := []string{net.GetIp()}
		for _, a := range net.GetAdditionalIps() {
			ips = append(ips, a.GetIp())
		}
		for _, s := range ips {
			if a, err := netip.ParseAddr(s); err == nil {
				st.ips = append(st.ips, a.Unmap())
			}
		}
	}
	for _, ns := range info.RuntimeSpec.Linux.Namespaces {
		if ns.Type == "network" && ns.Path != "" {
			st.netnsPath = ns.Path
		}
	}
	var fst unix.Stat_t
	if st.netnsPath != "" && unix.Stat(st.netnsPath, &fst) == nil {
		st.netns = fst.Ino
		return st, true
	}
	if st.pid > 0 {
		p := filepath.Join(c.proc, strconv.Itoa(st.pid), "ns/net")
		if unix.Stat(p, &fst) == nil {
			st.netns, st.netnsPath = fst.Ino, p
			return st, true
		}
	}
	return st, false
}
