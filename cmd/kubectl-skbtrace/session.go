package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// apiTimeout bounds each API request the plugin makes on its own.
const apiTimeout = 15 * time.Second

// session is one trace: the clients, the pod once created, and the
// interrupt that ends it.
type session struct {
	o      *options
	c      kubernetes.Interface
	cfg    *rest.Config // for pods/attach; nil in unit tests
	ns     string       // the target pod's namespace (the context's for a node)
	stdout io.Writer
	stderr io.Writer
	stop   <-chan struct{} // closed at the first SIGINT or SIGTERM
	kill   <-chan struct{} // closed at the second

	capture *captureFile                                              // -w's file, nil without -w
	attach  func(ctx context.Context, stdout, stderr io.Writer) error // pods/attach (attachREST)

	ctx    context.Context // the session's own, cancelled when it returns
	pod    *corev1.Pod     // the trace pod, once created
	watch  *podWatch
	notify func(string) // says what the plugin does, on stderr
}

// errExit carries a container's exit code out of trace.
type errExit struct{ code int }

func (e errExit) Error() string { return fmt.Sprintf("exit code %d", e.code) }

// trace runs the whole session and returns the process's exit code.
func (s *session) trace() int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.ctx = ctx
	code, err := s.run()
	if err != nil {
		if errors.Is(err, errStopped) {
			return 130
		}
		fmt.Fprintf(s.stderr, "kubectl-skbtrace: %v\n", err)
		return 1
	}
	return code
}

// run resolves the target, creates the trace pod and follows it to its
// end. Once the pod exists, it is deleted on every path out.
func (s *session) run() (int, error) {
	rctx, rcancel := context.WithTimeout(s.ctx, apiTimeout)
	defer rcancel()
	go func() {
		select {
		case <-s.stop:
			rcancel()
		case <-rctx.Done():
		}
	}()
	node, err := resolve(rctx, s.c, s.o.target, s.ns)
	if err != nil {
		if isClosed(s.stop) {
			return 0, errStopped
		}
		return 0, err
	}
	traceNS := s.o.traceNamespace
	if traceNS == "" {
		traceNS = s.ns
	}
	p, err := s.c.CoreV1().Pods(traceNS).Create(rctx, tracePod(s.o, traceNS, node, s.ns), metav1.CreateOptions{})
	if err != nil {
		if isClosed(s.stop) {
			return 0, errStopped
		}
		return 0, createError(err, traceNS)
	}
	s.pod = p
	wctx, wcancel := context.WithCancel(s.ctx)
	defer wcancel()
	s.watch = watchPod(wctx, s.c, p.Namespace, p.Name)
	defer s.remove()
	s.notify(fmt.Sprintf("tracing %s on node %s from pod %s/%s", s.o.target.describe(s.ns), node, p.Namespace, p.Name))

	if err := s.waitStarted(); err != nil {
		return 0, err
	}
	return s.follow()
}

// isClosed says whether ch has been closed.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
