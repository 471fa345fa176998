package main

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// resolve reads the target and returns the node to trace on: a pod's
// node once it is scheduled and running, or the node itself.
func resolve(ctx context.Context, c kubernetes.Interface, t target, ns string) (string, error) {
	if t.kind == kindNode {
		if _, err := c.CoreV1().Nodes().Get(ctx, t.name, metav1.GetOptions{}); err != nil {
			return "", getError(err, t, ns)
		}
		return t.name, nil
	}
	p, err := c.CoreV1().Pods(ns).Get(ctx, t.name, metav1.GetOptions{})
	if err != nil {
		return "", getError(err, t, ns)
	}
	switch {
	case p.DeletionTimestamp != nil:
		return "", fmt.Errorf("%s is being deleted", t.describe(ns))
	case p.Spec.NodeName == "":
		return "", fmt.Errorf("%s is not scheduled to a node yet (phase %s): nothing to trace until it is", t.describe(ns), p.Status.Phase)
	case p.Spec.HostNetwork:
		return "", fmt.Errorf("%s uses the node's network (hostNetwork): trace node/%s instead", t.describe(ns), p.Spec.NodeName)
	case p.Status.Phase != corev1.PodRunning:
		return "", fmt.Errorf("%s is not running (phase %s) on node %q", t.describe(ns), p.Status.Phase, p.Spec.NodeName)
	}
	return p.Spec.NodeName, nil
}
