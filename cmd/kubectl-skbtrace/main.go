// Command kubectl-skbtrace is a kubectl plugin that traces a pod's or a
// node's packets with skbtrace: it runs skbtrace in a short-lived pod on
// the node (the least privileges of deploy/kubernetes/daemonset.yaml,
// hostPID and hostNetwork, the node's CRI socket to name pods), streams
// its output to the terminal, and removes the pod when the trace ends,
// fails or is interrupted. Installed on PATH, it is `kubectl skbtrace`.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-logr/logr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
)

// version is set at build time (-X main.version=...).
var version = "dev"

func main() {
	// client-go's own logging (watch retries and the like) would mix with
	// the trace's output: the plugin says what matters itself.
	klog.SetLogger(logr.Discard())
	stop, kill := interrupts()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, stop, kill, connect))
}

// interrupts returns a channel closed at the first SIGINT or SIGTERM and
// one closed at the second.
func interrupts() (<-chan struct{}, <-chan struct{}) {
	stop, kill := make(chan struct{}), make(chan struct{})
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		close(stop)
		<-sig
		close(kill)
	}()
	return stop, kill
}

// connector makes the clients from the kubeconfig flags and returns the
// namespace to use: -n, else the context's, else default.
type connector func(o *options) (kubernetes.Interface, *rest.Config, string, error)

// connect is the connector of a real cluster, with kubectl's loading
// rules: --kubeconfig, else $KUBECONFIG, else ~/.kube/config.
func connect(o *options) (kubernetes.Interface, *rest.Config, string, error) {
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(o.loading, o.kube)
	ns, _, err := cc.Namespace()
	if err != nil {
		return nil, nil, "", err
	}
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, nil, "", err
	}
	cfg.UserAgent = "kubectl-skbtrace/" + version
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, "", err
	}
	return c, cfg, ns, nil
}

// attachVia is how a session attaches to its container: pods/attach;
// tests replace it.
var attachVia = (*session).attachREST

// run is main without the exit, for tests.
func run(argv []string, stdout, stderr io.Writer, stop, kill <-chan struct{}, conn connector) int {
	o, err := parseArgs(argv)
	if err != nil {
		fmt.Fprintf(stderr, "kubectl-skbtrace: %v\n", err)
		return 1
	}
	switch {
	case o.help:
		usage(stdout)
		return 0
	case o.version:
		fmt.Fprintf(stdout, "kubectl-skbtrace %s\n", version)
		return 0
	}
	c, cfg, ns, err := conn(o)
	if err != nil {
		fmt.Fprintf(stderr, "kubectl-skbtrace: the kubeconfig: %v\n", err)
		return 1
	}
	s := &session{o: o, c: c, cfg: cfg, ns: ns, stdout: stdout, stderr: stderr, stop: stop, kill: kill,
		notify: func(m string) { fmt.Fprintf(stderr, "kubectl-skbtrace: %s\n", m) }}
	s.attach = func(ctx context.Context, stdout, stderr io.Writer) error { return attachVia(s, ctx, stdout, stderr) }
	if o.write != "" {
		if s.capture, err = createCapture(o.write); err != nil {
			fmt.Fprintf(stderr, "kubectl-skbtrace: %v\n", err)
			return 1
		}
	}
	code := s.trace()
	if s.capture != nil {
		if err := s.capture.finish(); err != nil {
			fmt.Fprintf(stderr, "kubectl-skbtrace: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}
