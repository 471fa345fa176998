package k8stest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Pod is a pod sandbox with one container, "main", made by CRI.RunPod.
type Pod struct {
	Namespace   string // metadata namespace (label io.kubernetes.pod.namespace)
	Name        string // metadata name (label io.kubernetes.pod.name)
	UID         string // metadata uid (label io.kubernetes.pod.uid)
	SandboxID   string // CRI pod sandbox ID
	ContainerID string // CRI container ID of "main"
	IP          string // the pod's IPv4 address, from PodSandboxStatus
	PID         int    // main's process, as the host sees it
	NetNS       string // path of the pod's network namespace
	NetNSInode  uint64 // inode of the network namespace (stat -L /proc/PID/ns/net)
	HostVeth    string // host side of the pod's eth0 (its iflink)
	LogPath     string // main's CRI log file
	cri         *CRI
}

// The labels kubelet puts on a sandbox and its containers.
const (
	LabelPodName       = "io.kubernetes.pod.name"
	LabelPodNamespace  = "io.kubernetes.pod.namespace"
	LabelPodUID        = "io.kubernetes.pod.uid"
	LabelContainerName = "io.kubernetes.container.name"
)

// ContainerName is the name of a Pod's one container.
const ContainerName = "main"

// RunPod makes a pod through the CRI as kubelet would (crictl runp, create,
// start): a sandbox named namespace/name with a fresh UID and kubelet's
// labels, on the pod network, and one container, "main", from the podnet
// image running /podnet with args (none: podnet sleep). It waits until
// main runs and fills in the Pod. The pod is removed at cleanup, or by
// Stop.
func (c *CRI) RunPod(t testing.TB, namespace, name string, args ...string) *Pod {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p := &Pod{Namespace: namespace, Name: name, UID: newUID(), cri: c}
	labels := map[string]string{LabelPodName: name, LabelPodNamespace: namespace, LabelPodUID: p.UID}
	logDir := filepath.Join(c.Dir, "pods", namespace+"_"+name+"_"+p.UID)
	sandbox := &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: name, Namespace: namespace, Uid: p.UID},
		Hostname:     name,
		LogDirectory: logDir,
		Labels:       labels,
		Linux: &runtimeapi.LinuxPodSandboxConfig{
			CgroupParent: cgroupParent + "/pod" + p.UID,
		},
	}
	r, err := c.Runtime.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sandbox})
	if err != nil {
		c.proc.failf(t, "RunPodSandbox %s/%s: %v", namespace, name, err)
	}
	p.SandboxID = r.PodSandboxId
	t.Cleanup(func() { p.stop() })

	clabels := map[string]string{LabelContainerName: ContainerName}
	for k, v := range labels {
		clabels[k] = v
	}
	cr, err := c.Runtime.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{
		PodSandboxId: p.SandboxID,
		Config: &runtimeapi.ContainerConfig{
			Metadata: &runtimeapi.ContainerMetadata{Name: ContainerName},
			Image:    &runtimeapi.ImageSpec{Image: c.Set.Podnet},
			Args:     args,
			Labels:   clabels,
			LogPath:  ContainerName + ".log",
		},
		SandboxConfig: sandbox,
	})
	if err != nil {
		c.proc.failf(t, "CreateContainer in %s/%s: %v", namespace, name, err)
	}
	p.ContainerID = cr.ContainerId
	p.LogPath = filepath.Join(logDir, ContainerName+".log")
	if _, err := c.Runtime.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: p.ContainerID}); err != nil {
		c.proc.failf(t, "StartContainer in %s/%s: %v", namespace, name, err)
	}

	ss, err := c.Runtime.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: p.SandboxID, Verbose: true})
	if err != nil {
		c.proc.failf(t, "PodSandboxStatus %s/%s: %v", namespace, name, err)
	}
	p.IP = ss.Status.GetNetwork().GetIp()
	p.NetNS = infoNetNS(ss.Info)
	c.notePID(infoPID(ss.Info))
	cs, err := c.Runtime.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: p.ContainerID, Verbose: true})
	if err != nil {
		c.proc.failf(t, "ContainerStatus %s/%s: %v", namespace, name, err)
	}
	if cs.Status.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("k8stest: pod %s/%s: main is %s (exit %d, %s %s); its log:\n%s", namespace, name,
			cs.Status.State, cs.Status.ExitCode, cs.Status.Reason, cs.Status.Message, tail(p.LogPath, 20))
	}
	p.PID = infoPID(cs.Info)
	c.notePID(p.PID)
	if p.IP == "" || p.PID <= 0 {
		t.Fatalf("k8stest: pod %s/%s: no IP (%q) or no PID (%d) in the CRI status", namespace, name, p.IP, p.PID)
	}
	if p.NetNSInode, err = netnsInode(p.PID); err != nil {
		t.Fatalf("k8stest: pod %s/%s: %v", namespace, name, err)
	}
	if p.HostVeth, err = hostVeth(p.PID); err != nil {
		t.Fatalf("k8stest: pod %s/%s: %v", namespace, name, err)
	}
	return p
}

// Exec runs /podnet with args in the pod's container (CRI ExecSync, at
// most 30 s) and returns its standard output; a non-zero exit fails the
// test.
func (p *Pod) Exec(t testing.TB, args ...string) string {
	t.Helper()
	stdout, stderr, code, err := p.TryExec(args...)
	if err != nil || code != 0 {
		t.Fatalf("k8stest: exec /podnet %s in %s/%s: exit %d, %v: %s", strings.Join(args, " "), p.Namespace, p.Name, code, err, stderr)
	}
	return stdout
}

// TryExec is Exec that returns the outcome instead of failing the test.
func (p *Pod) TryExec(args ...string) (stdout, stderr string, exitCode int, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	r, err := p.cri.Runtime.ExecSync(ctx, &runtimeapi.ExecSyncRequest{
		ContainerId: p.ContainerID,
		Cmd:         append([]string{"/podnet"}, args...),
		Timeout:     30,
	})
	if err != nil {
		return "", "", -1, err
	}
	return string(r.Stdout), string(r.Stderr), int(r.ExitCode), nil
}

// Logs is what main has written so far, stdout and stderr interleaved,
// without the CRI log format's timestamps and stream tags.
func (p *Pod) Logs(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(p.LogPath)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, line := range strings.Split(string(b), "\n") {
		// TIMESTAMP STREAM P|F MESSAGE
		if f := strings.SplitN(line, " ", 4); len(f) == 4 {
			out.WriteString(f[3])
			if f[2] == "F" {
				out.WriteByte('\n')
			}
		}
	}
	return out.String()
}

// Stop stops and removes the pod (its container with it).
func (p *Pod) Stop(t testing.TB) {
	t.Helper()
	if err := p.stop(); err != nil {
		t.Fatalf("k8stest: stop pod %s/%s: %v", p.Namespace, p.Name, err)
	}
}

func (p *Pod) stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := p.cri.Runtime.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: p.SandboxID}); err != nil {
		return err
	}
	_, err := p.cri.Runtime.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: p.SandboxID})
	return err
}

// newUID is a random UUID (version 4), as the API server gives pods.
func newUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// verboseInfo is the part of containerd's verbose CRI status ("info") used
// here.
type verboseInfo struct {
	PID         int `json:"pid"`
	RuntimeSpec struct {
		Linux struct {
			Namespaces []struct {
				Type string `json:"type"`
				Path string `json:"path"`
			} `json:"namespaces"`
		} `json:"linux"`
	} `json:"runtimeSpec"`
}

func parseInfo(info map[string]string) verboseInfo {
	var v verboseInfo
	json.Unmarshal([]byte(info["info"]), &v)
	return v
}

// infoPID is the process of a verbose sandbox or container status.
func infoPID(info map[string]string) int { return parseInfo(info).PID }

// infoNetNS is the network namespace path of a verbose sandbox status.
func infoNetNS(info map[string]string) string {
	for _, ns := range parseInfo(info).RuntimeSpec.Linux.Namespaces {
		if ns.Type == "network" {
			return ns.Path
		}
	}
	return ""
}

// String names the pod for messages.
func (p *Pod) String() string {
	return fmt.Sprintf("%s/%s (%s, %s)", p.Namespace, p.Name, p.IP, p.HostVeth)
}
