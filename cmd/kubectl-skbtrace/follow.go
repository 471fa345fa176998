package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// follow streams the trace's output until its container ends, or, after
// Ctrl-C, until skbtrace has printed its maps and exited (the pod is
// deleted with a grace period of --stop-grace, so the kubelet sends
// skbtrace SIGTERM) or the grace period and a few seconds more have
// passed. It returns the container's exit code.
func (s *session) follow() (int, error) {
	sctx, scancel := context.WithCancel(s.ctx)
	defer scancel()
	done := make(chan error, 1)
	go func() { done <- s.stream(sctx) }()
	var streamErr error
	stopped, killed := false, false
	select {
	case streamErr = <-done:
	case <-s.stop:
		stopped = true
		s.notify("stopping: skbtrace prints what it has and exits")
		s.deletePod(graceSeconds(s.o.stopGrace))
		deadline := time.NewTimer(s.o.stopGrace + 5*time.Second)
		defer deadline.Stop()
		select {
		case streamErr = <-done:
		case <-deadline.C:
			s.notify("skbtrace did not exit in time: removing its pod")
			scancel()
			<-done
		case <-s.kill:
			killed = true
			scancel()
			<-done
		}
	}
	wait := 10 * time.Second
	switch {
	case killed:
		wait = 0
	case stopped:
		wait = 3 * time.Second
	}
	cs, reason := s.terminated(wait)
	if streamErr != nil && !stopped && cs == nil {
		return 0, streamErr
	}
	if streamErr != nil && !stopped {
		fmt.Fprintf(s.stderr, "kubectl-skbtrace: %v\n", streamErr)
	}
	switch {
	case cs != nil && cs.ExitCode != 0 && !stopped:
		fmt.Fprintf(s.stderr, "kubectl-skbtrace: skbtrace exited with code %d%s\n", cs.ExitCode, why(cs.Reason, reason))
		if cs.Reason != "Error" && cs.Message != "" {
			// The runtime's word when the container could not run
			// (StartError); skbtrace's own errors came through its log.
			fmt.Fprintf(s.stderr, "kubectl-skbtrace: %s\n", strings.TrimSpace(cs.Message))
			if strings.Contains(cs.Message, "apply caps") {
				fmt.Fprintf(s.stderr, "kubectl-skbtrace: the node's container runtime cannot grant one of the capabilities %s (outside its own bounding set?); on kernels 5.11 and later SYS_RESOURCE is not needed: --capabilities BPF,PERFMON,SYSLOG,SYS_PTRACE\n", strings.Join(s.o.caps, ","))
			}
		}
		return int(cs.ExitCode), nil
	case cs != nil && stopped && (cs.ExitCode == 137 || cs.ExitCode == 143):
		return 130, nil // killed at our request: as a Ctrl-C'd skbtrace would
	case cs != nil:
		return int(cs.ExitCode), nil
	case stopped:
		return 130, nil
	}
	return 0, fmt.Errorf("the trace pod %s/%s went away before its container's exit code was seen", s.pod.Namespace, s.pod.Name)
}

// why explains an exit beyond its code: OOMKilled, DeadlineExceeded.
func why(containerReason, podReason string) string {
	switch {
	case podReason == "DeadlineExceeded":
		return " (--timeout reached)"
	case containerReason != "" && containerReason != "Error" && containerReason != "Completed":
		return " (" + containerReason + ")"
	}
	return ""
}

// terminated waits, at most d, for the container's terminated state, and
// returns it (nil if it never showed) with the pod's reason.
func (s *session) terminated(d time.Duration) (*corev1.ContainerStateTerminated, string) {
	ctx, cancel := context.WithTimeout(s.ctx, d)
	defer cancel()
	var cs *corev1.ContainerStateTerminated
	reason := ""
	s.watch.until(ctx, nil, func(p *corev1.Pod, gone bool) (bool, error) {
		if p != nil {
			reason = p.Status.Reason
			if c := traceContainer(p); c != nil && c.State.Terminated != nil {
				cs = c.State.Terminated
				return true, nil
			}
		}
		return gone, nil
	})
	return cs, reason
}

// graceSeconds is d in whole seconds, at least 1 (0 would force the
// deletion, leaving skbtrace no time).
func graceSeconds(d time.Duration) int64 {
	if s := int64(d / time.Second); s >= 1 {
		return s
	}
	return 1
}

// stream copies the trace's output: the container's log to stdout, or,
// with -w, its stdout (the pcapng) to the local file and its stderr to
// ours through pods/attach.
func (s *session) stream(ctx context.Context) error {
	if s.capture != nil {
		return s.streamCapture(ctx)
	}
	return s.streamLog(ctx, s.stdout, true)
}

// streamLog copies the container's log (stdout and stderr interleaved,
// as the node's runtime keeps it) to w, following it if follow is set.
func (s *session) streamLog(ctx context.Context, w io.Writer, follow bool) error {
	rc, err := s.c.CoreV1().Pods(s.pod.Namespace).GetLogs(s.pod.Name, &corev1.PodLogOptions{Container: containerName, Follow: follow}).Stream(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return streamError(err, "reading the trace's log", s.pod.Namespace)
	}
	defer rc.Close()
	_, err = io.Copy(w, rc)
	if ctx.Err() != nil || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}
