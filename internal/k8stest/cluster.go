package k8stest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// The node of every cluster here.
const (
	// NodeName is the name kubelet registers.
	NodeName = "skbtrace-k8stest"
	// NodeLink is the interface that carries NodeIP: a bridge without
	// ports (kernels without the dummy module have bridges).
	NodeLink = "skbtnode0"
	// NodeIP is the node's InternalIP (the API server's advertised address
	// and kubelet's --node-ip): not loopback, which both refuse.
	NodeIP = "10.243.0.1"
	// ServiceCIDR is the cluster's service range (nothing routes it: no
	// kube-proxy runs).
	ServiceCIDR = "10.96.0.0/24"
)

// kubeHostDirs are created by kubelet and by containerd for kubelet's pods
// outside kubelet's root directory; those that were absent are removed.
var kubeHostDirs = []string{"/var/lib/kubelet", "/var/log/pods", "/var/log/containers"}

// K8s is a single-node cluster as Cluster starts it.
type K8s struct {
	Kubeconfig string               // admin kubeconfig (system:masters)
	Client     kubernetes.Interface // clientset from Kubeconfig
	Node       string               // the node's name, NodeName
	NodeIP     string               // the node's InternalIP, NodeIP
	CRI        *CRI                 // kubelet's containerd
	Dir        string               // certificates, configs, logs, etcd data, kubelet root
	caPEM      string
	etcd       *component
	apiserver  *component
	kubelet    *component
}

// BinDir is where test/k8s/bins.sh puts kube-apiserver and kubelet.
func BinDir() string { return filepath.Join(CacheDir(), Version) }

// Cluster starts a single-node Kubernetes: Containerd, Debian's etcd,
// and kube-apiserver and kubelet from BinDir (a test fails, naming
// `make k8s-bins`, when they are absent). The node is NodeName on NodeIP;
// kubelet does not touch host sysctls (protectKernelDefaults) nor
// iptables. No controller-manager or scheduler runs: pods name their
// node (PodSpec does), and namespaces get their "default" ServiceAccount
// from EnsureNamespace. Cluster waits, within bounds, for etcd's health,
// the API server's /readyz and the node's Ready condition; a failure
// names the component and shows the end of its log. At cleanup everything
// is killed and what kubelet left (mounts, /kubepods cgroups,
// /var/lib/kubelet, /var/log/pods) is removed, so another Cluster can
// follow in the same test binary.
func Cluster(t testing.TB) *K8s {
	t.Helper()
	needRoot(t)
	needTools(t, "etcd", "ip", "unshare", "sh", "mount")
	for _, b := range []string{"kube-apiserver", "kubelet"} {
		if fi, err := os.Stat(filepath.Join(BinDir(), b)); err != nil || fi.Mode()&0o111 == 0 {
			t.Fatalf("k8stest: no %s in %s: run `make k8s-bins` (test/k8s/bins.sh) first", b, BinDir())
		}
	}
	// created are the kubeHostDirs this cluster makes; a cluster's
	// directory records them, so that the sweep after a test binary that
	// died can remove them too.
	var created []string
	sweepStale := func() error {
		err := sweepCluster()
		created = missing(kubeHostDirs...)
		return err
	}
	after := func() error {
		var problems []string
		if err := sweepCluster(); err != nil {
			problems = append(problems, err.Error())
		}
		if _, err := net.InterfaceByName(NodeLink); err == nil {
			problems = append(problems, NodeLink+" stays")
		}
		for _, d := range created {
			if err := os.RemoveAll(d); err != nil {
				problems = append(problems, err.Error())
			}
		}
		if len(problems) > 0 {
			return fmt.Errorf("cluster: %s", strings.Join(problems, "; "))
		}
		return nil
	}
	cri := startContainerd(t, sweepStale, after)
	k := &K8s{Node: NodeName, NodeIP: NodeIP, CRI: cri, Dir: tempDir(t, "k8stest-k8s-")}
	t.Cleanup(func() {
		if err := unmountUnder(k.Dir); err != nil {
			t.Errorf("k8stest: cluster cleanup: %v", err)
		}
		os.RemoveAll(k.Dir)
	})
	if err := os.WriteFile(filepath.Join(k.Dir, "created"), []byte(strings.Join(created, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, argv := range [][]string{
		{"ip", "link", "add", NodeLink, "type", "bridge"},
		{"ip", "addr", "add", NodeIP + "/32", "dev", NodeLink},
		{"ip", "link", "set", NodeLink, "up"},
	} {
		if _, err := run(10*time.Second, argv...); err != nil {
			t.Fatalf("k8stest: node address: %v", err)
		}
	}

	pkiDir := filepath.Join(k.Dir, "pki")
	os.MkdirAll(pkiDir, 0o700)
	p, err := newPKI(pkiDir)
	if err == nil {
		err = p.leaf("apiserver", "kube-apiserver", nil, "127.0.0.1", NodeIP, "10.96.0.1", "localhost",
			"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local")
	}
	if err == nil {
		err = p.leaf("admin", "admin", []string{"system:masters"})
	}
	if err == nil {
		err = p.leaf("kubelet", "system:node:"+NodeName, []string{"system:nodes"})
	}
	if err == nil {
		err = p.leaf("kubelet-serving", "system:node:"+NodeName, []string{"system:nodes"}, NodeIP, NodeName)
	}
	if err == nil {
		err = p.leaf("apiserver-kubelet-client", "kube-apiserver-kubelet-client", []string{"system:masters"})
	}
	if err == nil {
		err = p.keyPair("sa")
	}
	if err != nil {
		t.Fatalf("k8stest: certificates: %v", err)
	}
	ca, _ := os.ReadFile(p.path("ca.crt"))
	k.caPEM = string(ca)

	k.startEtcd(t)
	apiPort := freePort(t, NodeIP)
	server := "https://" + net.JoinHostPort(NodeIP, strconv.Itoa(apiPort))
	k.Kubeconfig = filepath.Join(k.Dir, "admin.kubeconfig")
	if err := p.kubeconfig(k.Kubeconfig, server, "admin"); err == nil {
		err = p.kubeconfig(filepath.Join(k.Dir, "kubelet.kubeconfig"), server, "kubelet")
	}
	if err != nil {
		t.Fatal(err)
	}
	k.startAPIServer(t, p, apiPort)
	k.startKubelet(t, p)
	k.EnsureNamespace(t, "default")
	return k
}

// freePort is a TCP port free on addr now.
func freePort(t testing.TB, addr string) int {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startEtcd starts etcd on loopback and waits for /health.
func (k *K8s) startEtcd(t testing.TB) {
	t.Helper()
	client := "http://127.0.0.1:" + strconv.Itoa(freePort(t, "127.0.0.1"))
	peer := "http://127.0.0.1:" + strconv.Itoa(freePort(t, "127.0.0.1"))
	k.etcd = startComponent(t, "etcd", filepath.Join(k.Dir, "etcd.log"), "etcd",
		"--name", "default", "--data-dir", filepath.Join(k.Dir, "etcd"),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", "default="+peer)
	t.Cleanup(func() { k.etcd.stop(syscall.SIGKILL, 0) })
	err := poll("etcd /health", 30*time.Second, 50*time.Millisecond, func() (bool, error) {
		if k.etcd.exited() {
			return true, fmt.Errorf("exited")
		}
		r, err := http.Get(client + "/health")
		if err != nil {
			return false, err
		}
		r.Body.Close()
		if r.StatusCode != http.StatusOK {
			return false, fmt.Errorf("%s", r.Status)
		}
		return true, nil
	})
	if err != nil {
		k.etcd.failf(t, "%v", err)
	}
	os.WriteFile(filepath.Join(k.Dir, "etcd.url"), []byte(client), 0o644)
}

// startAPIServer starts kube-apiserver on NodeIP and waits for /readyz.
func (k *K8s) startAPIServer(t testing.TB, p *pki, port int) {
	t.Helper()
	etcdURL, _ := os.ReadFile(filepath.Join(k.Dir, "etcd.url"))
	k.apiserver = startComponent(t, "kube-apiserver", filepath.Join(k.Dir, "kube-apiserver.log"),
		filepath.Join(BinDir(), "kube-apiserver"),
		"--etcd-servers="+string(etcdURL),
		"--bind-address="+NodeIP, "--secure-port="+strconv.Itoa(port), "--advertise-address="+NodeIP,
		"--cert-dir="+filepath.Join(k.Dir, "apiserver-certs"),
		"--tls-cert-file="+p.path("apiserver.crt"), "--tls-private-key-file="+p.path("apiserver.key"),
		"--client-ca-file="+p.path("ca.crt"),
		"--service-account-key-file="+p.path("sa.pub"), "--service-account-signing-key-file="+p.path("sa.key"),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-cluster-ip-range="+ServiceCIDR,
		"--authorization-mode=Node,RBAC", "--enable-admission-plugins=NodeRestriction",
		"--allow-privileged=true",
		"--kubelet-client-certificate="+p.path("apiserver-kubelet-client.crt"),
		"--kubelet-client-key="+p.path("apiserver-kubelet-client.key"),
		"--kubelet-preferred-address-types=InternalIP",
		"--profiling=false", "--v=1")
	// SIGTERM can take a minute, or hang once etcd is gone.
	t.Cleanup(func() { k.apiserver.stop(syscall.SIGKILL, 0) })
	cfg, err := clientcmd.BuildConfigFromFlags("", k.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Timeout = 10 * time.Second
	k.Client, err = kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = poll("kube-apiserver /readyz", 90*time.Second, 100*time.Millisecond, func() (bool, error) {
		if k.apiserver.exited() {
			return true, fmt.Errorf("exited")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		b, err := k.Client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err != nil {
			return false, err
		}
		return string(b) == "ok", nil
	})
	if err != nil {
		k.apiserver.failf(t, "%v", err)
	}
}

const kubeletConfig = `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: {{nodeip}}
port: {{port}}
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: {{healthz}}
tlsCertFile: {{pki}}/kubelet-serving.crt
tlsPrivateKeyFile: {{pki}}/kubelet-serving.key
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: {{pki}}/ca.crt
authorization:
  mode: Webhook
containerRuntimeEndpoint: unix://{{socket}}
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
protectKernelDefaults: true
makeIPTablesUtilChains: false
enableControllerAttachDetach: false
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: "1Mi"
  nodefs.available: "1%"
  nodefs.inodesFree: "1%"
  imagefs.available: "1%"
`

// startKubelet starts kubelet on containerd and waits for the node to be
// Ready.
func (k *K8s) startKubelet(t testing.TB, p *pki) {
	t.Helper()
	cfg := strings.NewReplacer("{{nodeip}}", NodeIP, "{{port}}", strconv.Itoa(freePort(t, NodeIP)),
		"{{healthz}}", strconv.Itoa(freePort(t, "127.0.0.1")), "{{pki}}", p.dir, "{{socket}}", k.CRI.Socket).Replace(kubeletConfig)
	cfgPath := filepath.Join(k.Dir, "kubelet.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(k.Dir, "kubelet")
	argv := kubeletSandbox(t, k.Dir, root)
	argv = append(argv, filepath.Join(BinDir(), "kubelet"),
		"--config="+cfgPath, "--kubeconfig="+filepath.Join(k.Dir, "kubelet.kubeconfig"),
		"--root-dir="+root, "--cert-dir="+filepath.Join(k.Dir, "kubelet-certs"),
		"--node-ip="+NodeIP, "--hostname-override="+NodeName, "--v=1")
	k.kubelet = startComponent(t, "kubelet", filepath.Join(k.Dir, "kubelet.log"), argv...)
	t.Cleanup(func() {
		k.kubelet.stop(syscall.SIGKILL, 0)
		unmountUnder(root)
	})
	err := poll("node "+NodeName+" Ready", 2*time.Minute, 100*time.Millisecond, func() (bool, error) {
		if k.kubelet.exited() {
			return true, fmt.Errorf("exited")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		n, err := k.Client.CoreV1().Nodes().Get(ctx, NodeName, metaGet)
		if err != nil {
			return false, err
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				if c.Status == corev1.ConditionTrue {
					return true, nil
				}
				return false, fmt.Errorf("Ready %s: %s %s", c.Status, c.Reason, c.Message)
			}
		}
		return false, fmt.Errorf("no Ready condition")
	})
	if err != nil {
		k.kubelet.failf(t, "%v", err)
	}
}

// kernelDefaults are the sysctls kubelet wants (its "kernel defaults"):
// with protectKernelDefaults it refuses to start unless they hold, without
// it it rewrites them on the host.
var kernelDefaults = map[string]string{
	"vm/overcommit_memory": "1",
	"kernel/panic":         "10",
	"kernel/panic_on_oops": "1",
}

// kubeletSandbox is the command prefix that runs kubelet in its own mount
// namespace where kernelDefaults are files bind-mounted over
// /proc/sys/...: kubelet (protectKernelDefaults: true) reads the values
// it wants and starts, and the host's sysctls stay as they are. /proc is
// made private there first, so that the binds never reach the host. The
// kubelet root directory root is made a shared mount beforehand, so that
// the volumes kubelet mounts under it reach containerd in the host's
// namespace.
func kubeletSandbox(t testing.TB, dir, root string) []string {
	t.Helper()
	if err := os.MkdirAll(root, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount(root, root, "", unix.MS_BIND, ""); err != nil {
		t.Fatalf("k8stest: bind %s: %v", root, err)
	}
	if err := unix.Mount("", root, "", unix.MS_SHARED, ""); err != nil {
		t.Fatalf("k8stest: make %s shared: %v", root, err)
	}
	script := "set -e; mount --make-rprivate /proc"
	sysctlDir := filepath.Join(dir, "sysctl")
	os.MkdirAll(sysctlDir, 0o755)
	for name, val := range kernelDefaults {
		f := filepath.Join(sysctlDir, strings.ReplaceAll(name, "/", "."))
		if err := os.WriteFile(f, []byte(val+"\n"), 0o444); err != nil {
			t.Fatal(err)
		}
		script += "; mount --bind " + f + " /proc/sys/" + name
	}
	script += `; exec "$@"`
	return []string{"unshare", "--mount", "--propagation", "unchanged", "--", "sh", "-c", script, "kubelet"}
}

// sweepCluster removes what the clusters of an earlier test binary that
// died without its cleanup left (their processes die with it): mounts,
// their directories and the kubeHostDirs they made, the node's interface,
// the /kubepods cgroups and the processes in them.
func sweepCluster() error {
	unmountUnder("/var/lib/kubelet")
	stale, _ := filepath.Glob("/tmp/k8stest-k8s-*")
	for _, d := range stale {
		unmountUnder(d)
		b, _ := os.ReadFile(filepath.Join(d, "created"))
		for _, c := range strings.Fields(string(b)) {
			if slices.Contains(kubeHostDirs, c) {
				unmountUnder(c)
				os.RemoveAll(c)
			}
		}
		os.RemoveAll(d)
	}
	deleteLink(NodeLink)
	return removeCgroup("/kubepods")
}
