package main

import (
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// rbacHint says what a user needs, as the README's Role grants it.
const rbacHint = "you need create/get/delete on pods and get on pods/log there (list and watch on pods, create on pods/attach for -w: see deploy/kubectl-skbtrace/rbac.yaml and the README)"

// createError says in the user's terms why the trace pod could not be
// created in ns: RBAC, the namespace's Pod Security level, a missing
// namespace, or the API server's own message.
func createError(err error, ns string) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "violates PodSecurity"):
		return fmt.Errorf("the Pod Security admission of namespace %q rejects the trace pod: skbtrace needs hostPID, hostNetwork, hostPath mounts, added capabilities (BPF, PERFMON, SYSLOG, SYS_RESOURCE, SYS_PTRACE) and seccomp Unconfined, which only the privileged level allows; label the namespace pod-security.kubernetes.io/enforce=privileged or pass --trace-namespace with one that is (%v)", ns, err)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("RBAC forbids creating pods in namespace %q: %s (%v)", ns, rbacHint, err)
	case apierrors.IsNotFound(err):
		return fmt.Errorf("namespace %q not found: pass --trace-namespace with one that exists", ns)
	case apierrors.IsInvalid(err):
		return fmt.Errorf("the API server refuses the trace pod: %v", err)
	}
	return fmt.Errorf("creating the trace pod in namespace %q: %v", ns, err)
}

// getError says in the user's terms why the target could not be read.
func getError(err error, t target, ns string) error {
	switch {
	case apierrors.IsNotFound(err) && t.kind == kindPod:
		return fmt.Errorf("pod %q not found in namespace %q", t.name, ns)
	case apierrors.IsNotFound(err):
		return fmt.Errorf("node %q not found", t.name)
	case apierrors.IsForbidden(err) && t.kind == kindPod:
		return fmt.Errorf("RBAC forbids reading pods in namespace %q: %s (%v)", ns, rbacHint, err)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("RBAC forbids reading node %q: tracing a node needs get on nodes, a ClusterRole (see deploy/kubectl-skbtrace/rbac.yaml) (%v)", t.name, err)
	}
	return fmt.Errorf("reading %s: %v", t.describe(ns), err)
}

// streamError says why the trace's output could not be read.
func streamError(err error, what, ns string) error {
	if apierrors.IsForbidden(err) {
		return fmt.Errorf("RBAC forbids %s in namespace %q: %s (%v)", what, ns, rbacHint, err)
	}
	return fmt.Errorf("%s: %v", what, err)
}
