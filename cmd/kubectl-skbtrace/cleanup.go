package main

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// goneWithin bounds remove's wait for the trace pod to disappear.
const goneWithin = 30 * time.Second

// deletePod asks for the trace pod's deletion with grace seconds for
// skbtrace to exit (0: at once).
func (s *session) deletePod(grace int64) error {
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	uid := s.pod.UID
	opts := metav1.DeleteOptions{GracePeriodSeconds: &grace}
	if uid != "" {
		opts.Preconditions = &metav1.Preconditions{UID: &uid}
	}
	err := s.c.CoreV1().Pods(s.pod.Namespace).Delete(ctx, s.pod.Name, opts)
	if err == nil || apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// remove makes sure the trace pod is gone, on every path out of a
// session once the pod exists: a deletion at once (the trace has ended,
// failed, or had its grace period after Ctrl-C), then a bounded wait
// until the API server no longer has it. What could not be removed is
// said, with the command that removes it.
func (s *session) remove() {
	if _, gone := s.watch.state(); !gone {
		if err := s.deletePod(0); err != nil {
			s.leftBehind(err)
			return
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), goneWithin)
	defer cancel()
	err := s.watch.until(ctx, nil, func(_ *corev1.Pod, gone bool) (bool, error) { return gone, nil })
	if err != nil {
		s.watch.poll(ctx)
		if _, gone := s.watch.state(); !gone {
			s.leftBehind(fmt.Errorf("still there after %v", goneWithin))
		}
	}
}

// leftBehind says that the trace pod could not be removed, and how to.
func (s *session) leftBehind(err error) {
	fmt.Fprintf(s.stderr, "kubectl-skbtrace: could not remove the trace pod: %v; remove it with kubectl delete pod -n %s %s --grace-period=0 --force\n",
		err, s.pod.Namespace, s.pod.Name)
}
