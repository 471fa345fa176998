package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
)

// pcapngMagic starts every pcapng file: the Section Header Block's type.
var pcapngMagic = []byte{0x0a, 0x0d, 0x0d, 0x0a}

// captureFile is -w's local file. The trace pod runs skbtrace with
// -w -, so its stdout is the pcapng and its lines go to stderr; the
// container's log is line-based text and no way to carry binary, so the
// bytes come through pods/attach, stdout and stderr on separate streams.
type captureFile struct {
	path string
	f    *os.File
	n    int64
	head []byte // the first bytes, to check the magic
}

// createCapture opens path before anything runs, so that a path that
// cannot be written fails before the trace pod is made.
func createCapture(path string) (*captureFile, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &captureFile{path: path, f: f}, nil
}

// Write writes p to the file.
func (c *captureFile) Write(p []byte) (int, error) {
	if len(c.head) < len(pcapngMagic) {
		c.head = append(c.head, p[:min(len(p), len(pcapngMagic)-len(c.head))]...)
	}
	n, err := c.f.Write(p)
	c.n += int64(n)
	return n, err
}

// finish closes the file and says whether it holds a whole capture: a
// file that received nothing is removed, one that does not start with
// pcapng's magic (attach came too late to see the header) is an error.
func (c *captureFile) finish() error {
	if err := c.f.Close(); err != nil {
		return err
	}
	switch {
	case c.n == 0:
		os.Remove(c.path)
		return fmt.Errorf("no packets were captured: %s not written", c.path)
	case !bytes.Equal(c.head, pcapngMagic):
		return fmt.Errorf("%s lacks the capture's start (the attach to the trace came late): it is not a valid pcapng file", c.path)
	}
	return nil
}

// streamCapture attaches to the trace container: its stdout to the
// capture file, its stderr to ours. If the container ended before the
// attach, its log (only text: skbtrace failed before capturing) is shown.
func (s *session) streamCapture(ctx context.Context) error {
	err := s.attach(ctx, s.capture, s.stderr)
	if err != nil && ctx.Err() == nil && s.capture.n == 0 {
		s.streamLog(ctx, s.stderr, false)
		if cs, _ := s.terminated(0); cs != nil {
			return nil
		}
		return streamError(err, "attaching to the trace (pods/attach)", s.pod.Namespace)
	}
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// attachREST is session.attach on a real API server: pods/attach over
// WebSocket, falling back to SPDY where the server does not upgrade to
// WebSocket, as kubectl does.
func (s *session) attachREST(ctx context.Context, stdout, stderr io.Writer) error {
	u := s.c.CoreV1().RESTClient().Post().Resource("pods").Namespace(s.pod.Namespace).Name(s.pod.Name).
		SubResource("attach").VersionedParams(&corev1.PodAttachOptions{Container: containerName, Stdout: true, Stderr: true}, scheme.ParameterCodec).URL()
	spdy, err := remotecommand.NewSPDYExecutor(s.cfg, "POST", u)
	if err != nil {
		return err
	}
	ws, err := remotecommand.NewWebSocketExecutor(s.cfg, "GET", u.String())
	if err != nil {
		return err
	}
	ex, err := remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
	if err != nil {
		return err
	}
	return ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: stdout, Stderr: stderr})
}
