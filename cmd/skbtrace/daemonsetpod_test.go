package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skbtrace/skbtrace/internal/k8stest"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// TestDaemonSetOnCluster runs the DaemonSet's pod as deploy/kubernetes
// ships it on a real single-node cluster (k8stest.Cluster; no controller
// manager runs, so the test creates the pod its template makes): the
// image `make image` builds, its service account, Secret
// skbtrace-web-config from web-config.sh, the template's mounts and
// settings (its port a free one, and SYS_RESOURCE left out where this
// machine's bounding set lacks it). A real Prometheus scrapes it as the
// PodMonitor does and gets exactly the drops sent in a namespace of the
// test's own; scraped without the password it is refused with 401.
func TestDaemonSetOnCluster(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: a cluster, and skbtrace loads eBPF programs")
	}
	for _, tool := range []string{"podman", "prometheus", "openssl", "htpasswd"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s (apt-get install podman prometheus openssl apache2-utils): %v", tool, err)
		}
	}
	read := func(file string, v any) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.UnmarshalStrict(data, v); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
	var ds appsv1.DaemonSet
	var sa corev1.ServiceAccount
	var secret corev1.Secret
	read("../../deploy/kubernetes/daemonset.yaml", &ds)
	read("../../deploy/kubernetes/serviceaccount.yaml", &sa)
	creds := filepath.Join(t.TempDir(), "creds")
	if out, err := exec.Command("bash", "../../deploy/kubernetes/web-config.sh", creds).CombinedOutput(); err != nil {
		t.Fatalf("web-config.sh: %v\n%s", err, out)
	}
	read(filepath.Join(creds, "web-config-secret.yaml"), &secret)

	k := k8stest.Cluster(t)
	image := clusterImage(t, k)
	k.EnsureNamespace(t, ds.Namespace)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := k.Client.CoreV1().ServiceAccounts(sa.Namespace).Create(ctx, &sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := k.Client.CoreV1().Secrets(secret.Namespace).Create(ctx, &secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	addr := freePort(t)
	port := addr[strings.LastIndex(addr, ":")+1:]
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "skbtrace-" + k.Node, Namespace: ds.Namespace, Labels: ds.Spec.Template.Labels,
		Annotations: ds.Spec.Template.Annotations}, Spec: *ds.Spec.Template.Spec.DeepCopy()}
	pod.Spec.NodeName = k.Node
	c := &pod.Spec.Containers[0]
	c.Image, c.ImagePullPolicy = image, corev1.PullNever
	if i := slices.Index(c.Args, "--metrics"); i < 0 || c.Args[i+1] != ":9464" || !slices.Contains(c.Args, "--web.config.file") {
		t.Fatalf("the DaemonSet's args %q: want --metrics :9464 and --web.config.file", c.Args)
	} else {
		c.Args[i+1] = ":" + port
	}
	n, _ := strconv.Atoi(port)
	c.Ports[0].ContainerPort = int32(n)
	if !boundingHas(24) { // CAP_SYS_RESOURCE, absent in this machine's container
		c.SecurityContext.Capabilities.Add = slices.DeleteFunc(c.SecurityContext.Capabilities.Add, func(c corev1.Capability) bool { return c == "SYS_RESOURCE" })
	}
	k.CreatePod(t, pod)

	inum := netnsWithLo(t, "skbtmpod")
	ca := filepath.Join(creds, "ca.crt")
	tlsCfg := fmt.Sprintf("    scheme: https\n    tls_config: {ca_file: %q, server_name: skbtrace}\n", ca)
	auth := fmt.Sprintf("    basic_auth: {username: skbtrace, password_file: %q}\n", filepath.Join(creds, "password"))
	prom := startPrometheusJobs(t, scrapeJob("podmonitor", addr, tlsCfg, auth)+scrapeJob("anonymous", addr, tlsCfg))
	// The pod serves once dropcount is attached; up to a minute on a
	// loaded host.
	deadline := time.Now().Add(90 * time.Second)
	for byLabels(prom.query(`up{job="podmonitor"}`, 0), "job") != "job=podmonitor: 1" {
		if time.Now().After(deadline) {
			logs, _ := k.Client.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{}).DoRaw(context.Background())
			t.Fatalf("the pod is not scraped after 90 s: %+v\npod's log:\n%s", prom.waitTargets(2), logs)
		}
		time.Sleep(500 * time.Millisecond)
	}
	checkTargets(t, prom.waitTargets(2), map[string]string{"podmonitor": "", "anonymous": "401 Unauthorized"})
	inNetns(t, "skbtmpod", udpTo(9, 6))
	prom.waitQuery(fmt.Sprintf(`sum by (job, reason) (skbtrace_drops_total{netns="%d"})`, inum), "job=podmonitor,reason=NO_SOCKET: 6", "job", "reason")
}

// clusterImage builds the image with `make image` under a test name and
// imports it into the cluster's containerd.
func clusterImage(t *testing.T, k *k8stest.K8s) string {
	t.Helper()
	version := fmt.Sprintf("dstest-%d", time.Now().UnixNano())
	ref := testImage + ":" + version
	if out, err := exec.Command("make", "-C", "../..", "image", "IMAGE="+testImage, "VERSION="+version).CombinedOutput(); err != nil {
		t.Fatalf("make image: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command("podman", "rmi", "-f", ref, testImage+":latest").Run() })
	tar := filepath.Join(t.TempDir(), "skbtrace.tar")
	if out, err := exec.Command("podman", "save", "-o", tar, ref).CombinedOutput(); err != nil {
		t.Fatalf("podman save: %v\n%s", err, out)
	}
	k.CRI.ImportImage(t, ref, tar)
	return ref
}

// boundingHas tells whether capability bit is in this process's bounding
// set.
func boundingHas(bit uint) bool {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return true
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "CapBnd:"); ok {
			var m uint64
			fmt.Sscanf(strings.TrimSpace(v), "%x", &m)
			return m&(1<<bit) != 0
		}
	}
	return true
}
