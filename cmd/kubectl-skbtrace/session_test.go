package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
)

// newFake is a clientset holding objs that gives created pods a name
// from their generateName and a UID, as the API server does.
func newFake(objs ...runtime.Object) *fake.Clientset {
	c := fake.NewClientset(objs...)
	n := 0
	var mu sync.Mutex
	c.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		p := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod)
		if p.Name == "" && p.GenerateName != "" {
			mu.Lock()
			n++
			p.Name = fmt.Sprintf("%s%05d", p.GenerateName, n)
			mu.Unlock()
			p.UID = types.UID("uid-" + p.Name)
		}
		return false, nil, nil
	})
	return c
}

// runningPod is a scheduled, running pod.
func runningPod(ns, name, node string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
}

// harness runs the plugin against a fake clientset.
type harness struct {
	c          *fake.Clientset
	stop, kill chan struct{}
	out, errb  syncBuffer
	attach     func(ctx context.Context, stdout, stderr io.Writer) error
	defaultNS  string
}

func newHarness(objs ...runtime.Object) *harness {
	h := &harness{c: newFake(objs...), stop: make(chan struct{}), kill: make(chan struct{}), defaultNS: "default"}
	return h
}

// graces returns the grace periods of the pod deletions asked for, in order.
func (h *harness) graces() []int64 {
	var g []int64
	for _, a := range h.c.Actions() {
		if d, ok := a.(k8stesting.DeleteActionImpl); ok && d.Resource.Resource == "pods" && d.DeleteOptions.GracePeriodSeconds != nil {
			g = append(g, *d.DeleteOptions.GracePeriodSeconds)
		}
	}
	return g
}

// run runs the plugin with argv and returns its exit code.
func (h *harness) run(argv ...string) int {
	conn := func(o *options) (kubernetes.Interface, *rest.Config, string, error) {
		ns := h.defaultNS
		if o.kube.Context.Namespace != "" {
			ns = o.kube.Context.Namespace
		}
		return h.c, nil, ns, nil
	}
	if h.attach != nil {
		defer func(old func(*session, context.Context, io.Writer, io.Writer) error) { attachVia = old }(attachVia)
		attachVia = func(_ *session, ctx context.Context, stdout, stderr io.Writer) error {
			return h.attach(ctx, stdout, stderr)
		}
	}
	return run(argv, &h.out, &h.errb, h.stop, h.kill, conn)
}

// tracePods lists the trace pods left in ns.
func (h *harness) tracePods(t *testing.T, ns string) []corev1.Pod {
	t.Helper()
	l, err := h.c.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=skbtrace,app.kubernetes.io/component=trace"})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// kubelet plays the node: once a trace pod appears in ns, it applies
// each status in turn, a moment apart.
func (h *harness) kubelet(t *testing.T, ns string, statuses ...corev1.ContainerState) {
	go func() {
		var p *corev1.Pod
		for i := 0; i < 500 && p == nil; i++ {
			if l, _ := h.c.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/component=trace"}); l != nil && len(l.Items) > 0 {
				p = &l.Items[0]
			} else {
				time.Sleep(10 * time.Millisecond)
			}
		}
		if p == nil {
			return
		}
		for _, st := range statuses {
			time.Sleep(50 * time.Millisecond)
			h.setState(ns, p.Name, st)
		}
	}()
}

// setState sets the trace container's state and the pod's phase to match.
func (h *harness) setState(ns, name string, st corev1.ContainerState) {
	p, err := h.c.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return
	}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: containerName, State: st}}
	switch {
	case st.Running != nil:
		p.Status.Phase = corev1.PodRunning
	case st.Terminated != nil && st.Terminated.ExitCode == 0:
		p.Status.Phase = corev1.PodSucceeded
	case st.Terminated != nil:
		p.Status.Phase = corev1.PodFailed
	default:
		p.Status.Phase = corev1.PodPending
	}
	h.c.CoreV1().Pods(ns).UpdateStatus(context.Background(), p, metav1.UpdateOptions{})
}

var (
	stRunning = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	stExit    = func(code int32) corev1.ContainerState {
		return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: "Error"}}
	}
	stWaiting = func(reason string) corev1.ContainerState {
		return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: "failed to pull"}}
	}
)

// syncBuffer is a strings.Builder safe for the goroutines that write it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestTargetErrors: a target that is missing, unscheduled or not running
// is said in the user's terms, and nothing is created.
func TestTargetErrors(t *testing.T) {
	pending := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "pending"}, Status: corev1.PodStatus{Phase: corev1.PodPending}}
	done := runningPod("default", "done", "n1")
	done.Status.Phase = corev1.PodSucceeded
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"pod/web-0"}, `pod "web-0" not found in namespace "default"`},
		{[]string{"web-0", "-n", "shop"}, `pod "web-0" not found in namespace "shop"`},
		{[]string{"pod/pending"}, `pod "pending" in namespace "default" is not scheduled to a node yet`},
		{[]string{"pod/done"}, `pod "done" in namespace "default" is not running (phase Succeeded)`},
		{[]string{"node/nowhere"}, `node "nowhere" not found`},
	} {
		h := newHarness(pending, done)
		if code := h.run(tc.argv...); code != 1 || !strings.Contains(h.errb.String(), tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 1 and %q", tc.argv, code, h.errb.String(), tc.want)
		}
		if n := len(h.tracePods(t, "default")); n != 0 {
			t.Errorf("%q: %d trace pods created", tc.argv, n)
		}
	}
}

// TestAPIErrors: RBAC and Pod Security refusals in the user's terms.
func TestAPIErrors(t *testing.T) {
	forbidden := func(verb, msg string) error {
		return apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New(msg))
	}
	for _, tc := range []struct {
		verb string
		err  error
		want string
	}{
		{"create", forbidden("create", `User "dev" cannot create resource "pods"`), `RBAC forbids creating pods in namespace "default": you need create/get/delete on pods and get on pods/log there`},
		{"create", forbidden("create", `violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true, hostPID=true)`), `the Pod Security admission of namespace "default" rejects the trace pod`},
		{"get", forbidden("get", `User "dev" cannot get resource "pods"`), `RBAC forbids reading pods in namespace "default"`},
		{"create", apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "default"), `namespace "default" not found`},
	} {
		h := newHarness(runningPod("default", "web-0", "n1"))
		h.c.PrependReactor(tc.verb, "pods", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, tc.err })
		if code := h.run("pod/web-0"); code != 1 || !strings.Contains(h.errb.String(), tc.want) {
			t.Errorf("%s %v: exit %d, stderr %q; want 1 and %q", tc.verb, tc.err, code, h.errb.String(), tc.want)
		}
	}
}

// TestPullError: an image the node cannot pull is said, and the pod goes.
func TestPullError(t *testing.T) {
	for _, reason := range []string{"ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull"} {
		h := newHarness(runningPod("default", "web-0", "n1"))
		h.kubelet(t, "default", stWaiting("ContainerCreating"), stWaiting(reason))
		code := h.run("pod/web-0", "--image", "localhost/nope:1")
		want := "the node cannot pull image localhost/nope:1: build it with make image and load it on the node, or pass --image"
		if code != 1 || !strings.Contains(h.errb.String(), want) {
			t.Errorf("%s: exit %d, stderr %q; want 1 and %q", reason, code, h.errb.String(), want)
		}
		if n := len(h.tracePods(t, "default")); n != 0 {
			t.Errorf("%s: %d trace pods left", reason, n)
		}
	}
}

// TestStartTimeout: a pod that never starts is given up on, and removed.
func TestStartTimeout(t *testing.T) {
	h := newHarness(runningPod("default", "web-0", "n1"))
	h.kubelet(t, "default", stWaiting("ContainerCreating"))
	code := h.run("pod/web-0", "--start-timeout", "300ms")
	if code != 1 || !strings.Contains(h.errb.String(), "did not start within 300ms: still Pending (ContainerCreating)") {
		t.Errorf("exit %d, stderr %q", code, h.errb.String())
	}
	if n := len(h.tracePods(t, "default")); n != 0 {
		t.Errorf("%d trace pods left", n)
	}
}

// TestTraceExitCode: the log reaches stdout, the exit code is the
// container's, the pod goes, and it ran where and as it should.
func TestTraceExitCode(t *testing.T) {
	h := newHarness(runningPod("shop", "web-0", "n1"))
	var created *corev1.Pod
	h.c.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		created = a.(k8stesting.CreateAction).GetObject().(*corev1.Pod).DeepCopy()
		return false, nil, nil
	})
	h.kubelet(t, "shop", stRunning, stExit(3))
	code := h.run("pod/web-0", "-n", "shop", "whydrop")
	if code != 3 || !strings.Contains(h.out.String(), "fake logs") || !strings.Contains(h.errb.String(), "skbtrace exited with code 3") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, h.out.String(), h.errb.String())
	}
	if created == nil || created.Namespace != "shop" || created.Spec.NodeName != "n1" || strings.Join(created.Spec.Containers[0].Args, " ") != "--cri-socket /run/containerd/containerd.sock --pod shop/web-0 whydrop" {
		t.Errorf("created %+v", created)
	}
	if n := len(h.tracePods(t, "shop")); n != 0 {
		t.Errorf("%d trace pods left", n)
	}
}

// TestTraceNamespace: --trace-namespace puts the pod there; a node's
// trace goes to the context's namespace.
func TestTraceNamespace(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	h := newHarness(runningPod("shop", "web-0", "n1"), node)
	h.kubelet(t, "tracing", stRunning, stExit(0))
	if code := h.run("pod/web-0", "-n", "shop", "--trace-namespace", "tracing"); code != 0 {
		t.Errorf("exit %d: %s", code, h.errb.String())
	}
	h = newHarness(node)
	h.defaultNS = "ops"
	h.kubelet(t, "ops", stRunning, stExit(0))
	if code := h.run("node/n1", "-e", "skb:* { }"); code != 0 {
		t.Errorf("node: exit %d: %s", code, h.errb.String())
	}
}
