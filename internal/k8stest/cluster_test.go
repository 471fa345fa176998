package k8stest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// TestCluster brings a cluster up twice in a row: a pod with nodeName
// reaches Running with an IP, kubelet labels its sandbox, a pod can be
// deleted; and after each cleanup nothing stays and the host sysctls
// kubelet would rewrite are unchanged.
func TestCluster(t *testing.T) {
	needRoot(t)
	before := lockedSnapshot(t)
	for _, round := range []string{"first", "second"} {
		t.Run(round, func(t *testing.T) {
			start := time.Now()
			k := Cluster(t)
			t.Logf("cluster ready in %s", time.Since(start).Round(time.Millisecond))
			start = time.Now()
			pod := k.RunPod(t, "skbtrace-test", "server", "udp-serve", "9000")
			t.Logf("pod Running in %s: %s", time.Since(start).Round(time.Millisecond), pod.Status.PodIP)
			if !strings.HasPrefix(pod.Status.PodIP, "10.244.0.") || pod.Spec.NodeName != NodeName {
				t.Errorf("pod IP %s on node %s", pod.Status.PodIP, pod.Spec.NodeName)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			l, err := k.CRI.Runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{
				LabelSelector: map[string]string{LabelPodUID: string(pod.UID)}}})
			if err != nil || len(l.Items) != 1 || l.Items[0].Labels[LabelPodName] != "server" || l.Items[0].Labels[LabelPodNamespace] != "skbtrace-test" {
				t.Errorf("sandbox of pod %s: %v %v", pod.UID, l, err)
			}
			if _, err := k.Client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{}); err != nil {
				t.Error(err)
			}
			if round == "first" {
				k.DeletePod(t, "skbtrace-test", "server")
				// A service account token is a volume kubelet mounts
				// from its own mount namespace: it must reach the
				// container.
				spec := k.PodSpec("skbtrace-test", "token")
				yes := true
				spec.Spec.AutomountServiceAccountToken = &yes
				pod := k.CreatePod(t, spec)
				cs, err := k.CRI.Runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{
					LabelSelector: map[string]string{LabelPodUID: string(pod.UID)}}})
				if err != nil || len(cs.Containers) != 1 {
					t.Fatalf("containers of pod %s: %v %v", pod.UID, cs, err)
				}
				st, err := k.CRI.Runtime.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: cs.Containers[0].Id, Verbose: true})
				if err != nil {
					t.Fatal(err)
				}
				tok := fmt.Sprintf("/proc/%d/root/var/run/secrets/kubernetes.io/serviceaccount/token", infoPID(st.Info))
				if b, err := os.ReadFile(tok); err != nil || len(b) < 100 {
					t.Errorf("service account token in the container: %v (%d bytes)", err, len(b))
				}
			}
		})
		checkClean(t, before)
	}
}
