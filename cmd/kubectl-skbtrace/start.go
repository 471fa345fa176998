package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

// errStopped ends a wait that Ctrl-C interrupted.
var errStopped = errors.New("interrupted")

// pullReasons are the container's waiting reasons that mean the node
// cannot get the image.
var pullReasons = map[string]bool{
	"ErrImagePull": true, "ImagePullBackOff": true, "ErrImageNeverPull": true, "InvalidImageName": true,
}

// startFailReasons are the waiting reasons after which the container
// will not start without a change.
var startFailReasons = map[string]bool{
	"CreateContainerConfigError": true, "CreateContainerError": true, "RunContainerError": true, "PreCreateHookError": true, "PreStartHookError": true,
}

// started says whether the trace pod's container has started (it runs
// or has already ended: its log holds what it said), or why it never
// will, in the user's terms.
func started(p *corev1.Pod, gone bool, image string) (bool, error) {
	if gone {
		return false, errors.New("the trace pod was deleted before it started")
	}
	cs := traceContainer(p)
	if cs != nil {
		switch {
		case cs.State.Running != nil || cs.State.Terminated != nil:
			return true, nil
		case cs.State.Waiting != nil && pullReasons[cs.State.Waiting.Reason]:
			return false, fmt.Errorf("the node cannot pull image %s: build it with make image and load it on the node, or pass --image (%s: %s)", image, cs.State.Waiting.Reason, cs.State.Waiting.Message)
		case cs.State.Waiting != nil && startFailReasons[cs.State.Waiting.Reason]:
			return false, fmt.Errorf("the trace container cannot start: %s: %s", cs.State.Waiting.Reason, cs.State.Waiting.Message)
		}
	}
	if p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded {
		return false, fmt.Errorf("the trace pod ended before its container started: %s %s", p.Status.Reason, p.Status.Message)
	}
	return false, nil
}

// waitStarted waits, at most o.startTimeout, for the trace pod to start.
// When it times out, the pod's warning events say why, if RBAC lets us
// read them (a hostPath that is not there, for example: no CRI socket at
// --cri-socket's path).
func (s *session) waitStarted() error {
	ctx, cancel := context.WithTimeout(s.ctx, s.o.startTimeout)
	defer cancel()
	err := s.watch.until(ctx, s.stop, func(p *corev1.Pod, gone bool) (bool, error) {
		return started(p, gone, s.o.image)
	})
	if errors.Is(err, context.DeadlineExceeded) {
		why := "still " + s.podPhase()
		if ev := s.warnings(); ev != "" {
			why = ev
		}
		return fmt.Errorf("the trace pod %s/%s did not start within %v: %s", s.pod.Namespace, s.pod.Name, s.o.startTimeout, why)
	}
	return err
}

// podPhase describes the pod's state for a message: its phase and the
// container's waiting reason.
func (s *session) podPhase() string {
	p, _ := s.watch.state()
	if p == nil {
		return "not seen"
	}
	d := string(p.Status.Phase)
	if cs := traceContainer(p); cs != nil && cs.State.Waiting != nil {
		d += " (" + cs.State.Waiting.Reason + ")"
	}
	return d
}

// warnings returns the trace pod's warning events, newest last, in one line.
func (s *session) warnings() string {
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	sel := fields.Set{"involvedObject.name": s.pod.Name, "type": corev1.EventTypeWarning}.AsSelector().String()
	evs, err := s.c.CoreV1().Events(s.pod.Namespace).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil || len(evs.Items) == 0 {
		return ""
	}
	sort.Slice(evs.Items, func(i, j int) bool { return evs.Items[i].LastTimestamp.Before(&evs.Items[j].LastTimestamp) })
	var msgs []string
	for _, e := range evs.Items {
		msgs = append(msgs, e.Reason+": "+e.Message)
	}
	if len(msgs) > 3 {
		msgs = msgs[len(msgs)-3:]
	}
	return strings.Join(msgs, "; ")
}
