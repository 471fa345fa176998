package main

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// pollEvery is how often podWatch also reads the pod with a GET, a
// backstop for a watch that stalls or that RBAC refuses.
const pollEvery = 2 * time.Second

// podWatch follows one pod: the latest version the API server showed,
// and whether the pod is gone. A watch feeds it (list, then watch, by
// the pod's name); a GET every pollEvery is the backstop.
type podWatch struct {
	c    kubernetes.Interface
	ns   string
	name string

	mu      sync.Mutex
	last    *corev1.Pod
	gone    bool
	changed chan struct{} // closed at each update, then replaced
}

// watchPod starts following ns/name until ctx ends.
func watchPod(ctx context.Context, c kubernetes.Interface, ns, name string) *podWatch {
	w := &podWatch{c: c, ns: ns, name: name, changed: make(chan struct{})}
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = sel
			return c.CoreV1().Pods(ns).List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return c.CoreV1().Pods(ns).Watch(ctx, o)
		},
	}
	go watchtools.UntilWithSync(ctx, lw, &corev1.Pod{}, nil, func(ev watch.Event) (bool, error) {
		p, ok := ev.Object.(*corev1.Pod)
		if !ok || p.Name != name {
			return false, nil
		}
		w.update(p, ev.Type == watch.Deleted)
		return ev.Type == watch.Deleted, nil
	})
	return w
}

// update records p (or that the pod is gone) and wakes the waiters.
func (w *podWatch) update(p *corev1.Pod, gone bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if p != nil && !gone {
		if w.last != nil && w.last.ResourceVersion == p.ResourceVersion && !w.gone {
			return
		}
		w.last = p
	}
	if gone {
		if p != nil {
			w.last = p
		}
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
