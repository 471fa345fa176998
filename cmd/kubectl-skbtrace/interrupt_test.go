package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
)

// TestInterruptWrite: with -w, the capture arrives through attach into
// the local file byte for byte and stderr through ours; Ctrl-C deletes
// the pod with --stop-grace (the kubelet's SIGTERM: skbtrace prints its
// maps and exits 0), the plugin keeps reading until the container ends,
// exits with its code, and no trace pod is left.
func TestInterruptWrite(t *testing.T) {
	h := newHarness(runningPod("default", "web-0", "n1"))
	capture := append(append([]byte{}, pcapngMagic...), 0, 1, 2, '\n', '\r', 0xff)
	exited := make(chan struct{})
	h.attach = func(ctx context.Context, stdout, stderr io.Writer) error {
		stdout.Write(capture[:5])
		stdout.Write(capture[5:])
		io.WriteString(stderr, "skbtrace: tracing 30 probes; Ctrl-C to end\n")
		select {
		case <-exited:
			io.WriteString(stderr, "@drops: 3\n")
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	// The kubelet: a graceful deletion stops the container (exit 0), then
	// the pod goes.
	h.c.PrependReactor("delete", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		d := a.(k8stesting.DeleteActionImpl)
		if g := d.DeleteOptions.GracePeriodSeconds; g != nil && *g > 0 {
			go func() {
				time.Sleep(100 * time.Millisecond)
				h.setState("default", d.Name, stExit(0))
				close(exited)
				time.Sleep(50 * time.Millisecond)
				zero := int64(0)
				h.c.CoreV1().Pods("default").Delete(context.Background(), d.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
			}()
			return true, nil, nil
		}
		return false, nil, nil
	})
	h.kubelet(t, "default", stRunning)
	go func() {
		for !strings.Contains(h.errb.String(), "Ctrl-C to end") {
			time.Sleep(10 * time.Millisecond)
		}
		close(h.stop)
	}()
	file := filepath.Join(t.TempDir(), "x.pcapng")
	start := time.Now()
	code := h.run("pod/web-0", "-w", file, "--stop-grace", "3s")
	if code != 0 || !strings.Contains(h.errb.String(), "@drops: 3") {
		t.Errorf("exit %d, stderr %q", code, h.errb.String())
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
	if got, err := os.ReadFile(file); err != nil || !bytes.Equal(got, capture) {
		t.Errorf("capture %x (%v), want %x", got, err, capture)
	}
	if g := h.graces(); len(g) == 0 || g[0] != 3 {
		t.Errorf("deletions' grace periods %v, want 3 first", g)
	}
	if n := len(h.tracePods(t, "default")); n != 0 {
		t.Errorf("%d trace pods left", n)
	}
}

// TestInterruptStuck: a trace that does not end after Ctrl-C is removed
// once --stop-grace and a few seconds have passed; a second Ctrl-C
// removes it at once.
func TestInterruptStuck(t *testing.T) {
	for _, twice := range []bool{false, true} {
		h := newHarness(runningPod("default", "web-0", "n1"))
		h.attach = func(ctx context.Context, stdout, stderr io.Writer) error {
			stdout.Write(pcapngMagic)
			io.WriteString(stderr, "Ctrl-C to end\n")
			<-ctx.Done()
			return ctx.Err()
		}
		h.c.PrependReactor("delete", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
			d := a.(k8stesting.DeleteActionImpl)
			g := d.DeleteOptions.GracePeriodSeconds
			return g != nil && *g > 0, nil, nil // a kubelet that never acts
		})
		h.kubelet(t, "default", stRunning)
		go func() {
			for !strings.Contains(h.errb.String(), "Ctrl-C to end") {
				time.Sleep(10 * time.Millisecond)
			}
			close(h.stop)
			if twice {
				time.Sleep(100 * time.Millisecond)
				close(h.kill)
			}
		}()
		start := time.Now()
		code := h.run("pod/web-0", "-w", filepath.Join(t.TempDir(), "x.pcapng"), "--stop-grace", "1s")
		d := time.Since(start)
		if code != 130 {
			t.Errorf("twice=%v: exit %d, stderr %q", twice, code, h.errb.String())
		}
		if (twice && d > 2*time.Second) || (!twice && (d < 5*time.Second || d > 12*time.Second)) {
			t.Errorf("twice=%v: took %v", twice, d)
		}
		if g := h.graces(); len(g) != 2 || g[0] != 1 || g[1] != 0 {
			t.Errorf("twice=%v: deletions' grace periods %v, want [1 0]", twice, g)
		}
		if n := len(h.tracePods(t, "default")); n != 0 {
			t.Errorf("twice=%v: %d trace pods left", twice, n)
		}
	}
}

// TestInterruptBeforeStart: Ctrl-C while the pod is starting removes it.
func TestInterruptBeforeStart(t *testing.T) {
	h := newHarness(runningPod("default", "web-0", "n1"))
	h.kubelet(t, "default", stWaiting("ContainerCreating"))
	go func() {
		for !strings.Contains(h.errb.String(), "tracing pod") {
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(100 * time.Millisecond)
		close(h.stop)
	}()
	if code := h.run("pod/web-0"); code != 130 {
		t.Errorf("exit %d, stderr %q", code, h.errb.String())
	}
	if n := len(h.tracePods(t, "default")); n != 0 {
		t.Errorf("%d trace pods left", n)
	}
}
