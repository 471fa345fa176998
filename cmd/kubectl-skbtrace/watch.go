package main

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// pollEvery is how often podWatch also reads the pod with a GET, a
// backstop for a watch that stalls or that RBAC refuses.
const pollEvery = 2 * time.Second

// podWatch follows one pod: the latest version the API server showed,
// and whether the pod is gone. A watch feeds it (list, then watch, by
// the pod's name); a GET every pollEvery of a wait is the backstop.
type podWatch struct {
	c    kubernetes.Interface
	ns   string
	name string

	mu      sync.Mutex
	last    *corev1.Pod
	gone    bool
	changed chan struct{} // closed at each update, then replaced
}

// watchPod starts following ns/name until ctx ends: a list by name,
// then a watch from the list's resourceVersion, again after a watch
// closes or fails (after a pause).
func watchPod(ctx context.Context, c kubernetes.Interface, ns, name string) *podWatch {
	w := &podWatch{c: c, ns: ns, name: name, changed: make(chan struct{})}
	go func() {
		for ctx.Err() == nil && !w.isGone() {
			if err := w.listWatch(ctx); err != nil {
				select {
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
			}
		}
	}()
	return w
}

// listWatch lists the pod, then watches it until the watch ends.
func (w *podWatch) listWatch(ctx context.Context) error {
	sel := fields.OneTermEqualSelector("metadata.name", w.name).String()
	pods := w.c.CoreV1().Pods(w.ns)
	l, err := pods.List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		return err
	}
	found := false
	for i := range l.Items {
		if l.Items[i].Name == w.name {
			w.update(&l.Items[i], false)
			found = true
		}
	}
	if !found {
		w.update(nil, true)
		return nil
	}
	wi, err := pods.Watch(ctx, metav1.ListOptions{FieldSelector: sel, ResourceVersion: l.ResourceVersion})
	if err != nil {
		return err
	}
	defer wi.Stop()
	for ev := range wi.ResultChan() {
		switch p, ok := ev.Object.(*corev1.Pod); {
		case ev.Type == watch.Error:
			return apierrors.FromObject(ev.Object)
		case !ok || p.Name != w.name:
		case ev.Type == watch.Deleted:
			w.update(p, true)
			return nil
		default:
			w.update(p, false)
		}
	}
	return nil
}

// isGone says whether the pod is known to be gone.
func (w *podWatch) isGone() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.gone
}

// update records p (or that the pod is gone) and wakes the waiters.
func (w *podWatch) update(p *corev1.Pod, gone bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if p != nil {
		w.last = p
	}
	if gone {
		w.gone = true
	}
	close(w.changed)
	w.changed = make(chan struct{})
}

// poll reads the pod once and records what it found.
func (w *podWatch) poll(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, pollEvery)
	defer cancel()
	p, err := w.c.CoreV1().Pods(w.ns).Get(ctx, w.name, metav1.GetOptions{})
	switch {
	case err == nil:
		w.update(p, false)
	case apierrors.IsNotFound(err):
		w.update(nil, true)
	}
}

// state returns the latest pod seen (nil before any) and whether it is gone.
func (w *podWatch) state() (*corev1.Pod, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last, w.gone
}

// until waits for cond to hold of the pod's state, for cond's error, or
// for ctx to end (ctx's error). stop, when it fires first, ends the wait
// with errStopped.
func (w *podWatch) until(ctx context.Context, stop <-chan struct{}, cond func(p *corev1.Pod, gone bool) (bool, error)) error {
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		w.mu.Lock()
		p, gone, ch := w.last, w.gone, w.changed
		w.mu.Unlock()
		if p != nil || gone {
			if ok, err := cond(p, gone); ok || err != nil {
				return err
			}
		}
		select {
		case <-ch:
		case <-tick.C:
			w.poll(ctx)
		case <-stop:
			return errStopped
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// traceContainer returns the status of skbtrace's container, if any.
func traceContainer(p *corev1.Pod) *corev1.ContainerStatus {
	if p == nil {
		return nil
	}
	for i := range p.Status.ContainerStatuses {
		if p.Status.ContainerStatuses[i].Name == containerName {
			return &p.Status.ContainerStatuses[i]
		}
	}
	return nil
}
