package k8stest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var metaGet = metav1.GetOptions{}

// EnsureNamespace creates namespace ns if it is missing, with what the
// absent controller-manager would give it: the "default" ServiceAccount
// and the kube-root-ca.crt ConfigMap.
func (k *K8s) EnsureNamespace(t testing.TB, ns string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	create := func(what string, err error) {
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("k8stest: create %s in %s: %v", what, ns, err)
		}
	}
	_, err := k.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	create("namespace", err)
	_, err = k.Client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	create("serviceaccount default", err)
	_, err = k.Client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kube-root-ca.crt"},
		Data: map[string]string{"ca.crt": k.caPEM}}, metav1.CreateOptions{})
	create("configmap kube-root-ca.crt", err)
}

// PodSpec is a pod ns/name on the node with one container, "main", from
// the podnet image running /podnet with args (none: podnet sleep): no
// image pull, no service account token, host DNS, a grace period of 2 s.
// Change what a test needs and pass it to CreatePod.
func (k *K8s) PodSpec(ns, name string, args ...string) *corev1.Pod {
	no := false
	grace := int64(2)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{
			NodeName: k.Node,
			Containers: []corev1.Container{{
				Name:            ContainerName,
				Image:           k.CRI.Set.Podnet,
				Args:            args,
				ImagePullPolicy: corev1.PullNever,
			}},
			AutomountServiceAccountToken:  &no,
			EnableServiceLinks:            &no,
			DNSPolicy:                     corev1.DNSDefault,
			TerminationGracePeriodSeconds: &grace,
		},
	}
}

// RunPod is CreatePod(t, k.PodSpec(ns, name, args...)).
func (k *K8s) RunPod(t testing.TB, ns, name string, args ...string) *corev1.Pod {
	t.Helper()
	return k.CreatePod(t, k.PodSpec(ns, name, args...))
}

// CreatePod creates pod (in a namespace made with EnsureNamespace) and
// waits, at most 2 minutes, until it is Running with an IP; it returns
// the pod as the API server then has it. A pod that fails, or does not
// run in time, fails the test with its status and the end of kubelet's
// log.
func (k *K8s) CreatePod(t testing.TB, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	k.EnsureNamespace(t, pod.Namespace)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := k.Client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("k8stest: create pod %s/%s: %v", pod.Namespace, pod.Name, err)
	}
	var got *corev1.Pod
	err := poll("pod "+pod.Namespace+"/"+pod.Name+" Running", 2*time.Minute, 100*time.Millisecond, func() (bool, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		p, err := k.Client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metaGet)
		if err != nil {
			return false, err
		}
		got = p
		switch p.Status.Phase {
		case corev1.PodRunning:
			if p.Status.PodIP != "" {
				return true, nil
			}
		case corev1.PodFailed, corev1.PodSucceeded:
			return true, fmt.Errorf("phase %s", p.Status.Phase)
		}
		return false, nil
	})
	if err != nil {
		k.kubelet.failf(t, "%v; pod status: %s", err, podStatus(got))
	}
	return got
}

// podStatus summarises a pod's status for a failure message.
func podStatus(p *corev1.Pod) string {
	if p == nil {
		return "none"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "phase %s %s %s", p.Status.Phase, p.Status.Reason, p.Status.Message)
	for _, c := range p.Status.Conditions {
		fmt.Fprintf(&b, "; %s=%s %s", c.Type, c.Status, c.Message)
	}
	for _, c := range p.Status.ContainerStatuses {
		if w := c.State.Waiting; w != nil {
			fmt.Fprintf(&b, "; %s waiting: %s %s", c.Name, w.Reason, w.Message)
		}
		if x := c.State.Terminated; x != nil {
			fmt.Fprintf(&b, "; %s terminated: exit %d %s %s", c.Name, x.ExitCode, x.Reason, x.Message)
		}
	}
	return b.String()
}

// DeletePod deletes a pod (with its grace period) and waits until kubelet
// has stopped it and it is gone from the API.
func (k *K8s) DeletePod(t testing.TB, ns, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := k.Client.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatalf("k8stest: delete pod %s/%s: %v", ns, name, err)
	}
	k.WaitPodGone(t, ns, name)
}

// WaitPodGone waits, at most 2 minutes, until pod ns/name no longer
// exists in the API.
func (k *K8s) WaitPodGone(t testing.TB, ns, name string) {
	t.Helper()
	var last *corev1.Pod
	err := poll("pod "+ns+"/"+name+" gone", 2*time.Minute, 100*time.Millisecond, func() (bool, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		p, err := k.Client.CoreV1().Pods(ns).Get(ctx, name, metaGet)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		last = p
		return false, err
	})
	if err != nil {
		k.kubelet.failf(t, "%v; pod status: %s", err, podStatus(last))
	}
}
