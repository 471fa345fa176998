package main

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestTracePodSpec checks the trace pod against the DaemonSet's least
// privileges: not privileged, ALL dropped and five capabilities added,
// seccomp Unconfined, host PID and network, a read-only root, tracefs
// read-only, the cache, the CRI socket, the node named, the args.
func TestTracePodSpec(t *testing.T) {
	o, err := parseArgs([]string{"pod/web-0", "-n", "shop", "-o", "json", "--timeout", "90s", "--cri-socket", "/run/k3s/containerd/containerd.sock", "--image", "localhost/skbtrace:x", "--", "--filter", "udp"})
	if err != nil {
		t.Fatal(err)
	}
	p := tracePod(o, "trace", "node-1", "shop")
	if p.Namespace != "trace" || p.GenerateName != "skbtrace-" || p.Spec.NodeName != "node-1" {
		t.Errorf("namespace %q generateName %q nodeName %q", p.Namespace, p.GenerateName, p.Spec.NodeName)
	}
	wantLabels := map[string]string{"app.kubernetes.io/name": "skbtrace", "app.kubernetes.io/component": "trace", "skbtrace.io/target-pod": "web-0"}
	if !reflect.DeepEqual(p.Labels, wantLabels) {
		t.Errorf("labels %v, want %v", p.Labels, wantLabels)
	}
	if p.Annotations[annotTarget] != "pod/shop/web-0" {
		t.Errorf("annotation %q", p.Annotations[annotTarget])
	}
	s := p.Spec
	if !s.HostPID || !s.HostNetwork || s.RestartPolicy != corev1.RestartPolicyNever || *s.AutomountServiceAccountToken ||
		*s.TerminationGracePeriodSeconds != 10 || s.ActiveDeadlineSeconds == nil || *s.ActiveDeadlineSeconds != 90 {
		t.Errorf("pod spec: %+v", s)
	}
	if len(s.Tolerations) != 1 || s.Tolerations[0].Operator != corev1.TolerationOpExists || s.Tolerations[0].Key != "" {
		t.Errorf("tolerations %+v", s.Tolerations)
	}
	if s.SecurityContext.SeccompProfile.Type != corev1.SeccompProfileTypeUnconfined {
		t.Errorf("seccomp %v", s.SecurityContext.SeccompProfile)
	}
	c := s.Containers[0]
	if c.Image != "localhost/skbtrace:x" || c.ImagePullPolicy != corev1.PullIfNotPresent {
		t.Errorf("image %q %q", c.Image, c.ImagePullPolicy)
	}
	sc := c.SecurityContext
	if *sc.Privileged || *sc.AllowPrivilegeEscalation || !*sc.ReadOnlyRootFilesystem || *sc.RunAsUser != 0 {
		t.Errorf("security context %+v", sc)
	}
	if !reflect.DeepEqual(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) ||
		!reflect.DeepEqual(sc.Capabilities.Add, []corev1.Capability{"BPF", "PERFMON", "SYSLOG", "SYS_RESOURCE", "SYS_PTRACE"}) {
		t.Errorf("capabilities %+v", sc.Capabilities)
	}
	wantArgs := []string{"--cri-socket", "/run/k3s/containerd/containerd.sock", "--pod", "shop/web-0", "-f", "json", "--filter", "udp"}
	if !reflect.DeepEqual(c.Args, wantArgs) {
		t.Errorf("args %q, want %q", c.Args, wantArgs)
	}
	if len(c.Env) != 1 || c.Env[0].Name != "XDG_CACHE_HOME" || c.Env[0].Value != "/var/cache/skbtrace" {
		t.Errorf("env %+v", c.Env)
	}
	mounts := map[string]corev1.VolumeMount{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m
	}
	vols := map[string]corev1.Volume{}
	for _, v := range s.Volumes {
		vols[v.Name] = v
	}
	if m := mounts["tracefs"]; m.MountPath != "/sys/kernel/tracing" || !m.ReadOnly ||
		vols["tracefs"].HostPath == nil || vols["tracefs"].HostPath.Path != "/sys/kernel/tracing" {
		t.Errorf("tracefs %+v %+v", m, vols["tracefs"])
	}
	if m := mounts["cache"]; m.MountPath != "/var/cache/skbtrace" || vols["cache"].EmptyDir == nil {
		t.Errorf("cache %+v %+v", m, vols["cache"])
	}
	if m := mounts["cri"]; m.MountPath != "/run/k3s/containerd/containerd.sock" || vols["cri"].HostPath == nil ||
		vols["cri"].HostPath.Path != m.MountPath || *vols["cri"].HostPath.Type != corev1.HostPathSocket {
		t.Errorf("cri %+v %+v", m, vols["cri"])
	}
}

// TestSkbtraceArgs: a node's trace has no --pod; -w becomes -w -; the
// tool's name comes last, after the flags.
func TestSkbtraceArgs(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want []string
	}{
		{[]string{"node/n1", "-e", "skb:* { }"}, []string{"--cri-socket", defaultCRISocket, "-e", "skb:* { }"}},
		{[]string{"pod/a", "whydrop", "--", "--duration", "5s"}, []string{"--cri-socket", defaultCRISocket, "--pod", "ns/a", "--duration", "5s", "whydrop"}},
		{[]string{"pod/a", "-w", "x.pcapng", "--", "--filter", "udp"}, []string{"--cri-socket", defaultCRISocket, "--pod", "ns/a", "-w", "-", "--filter", "udp"}},
	} {
		o, err := parseArgs(tc.argv)
		if err != nil {
			t.Fatal(err)
		}
		if got := skbtraceArgs(o, "ns"); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: %q, want %q", tc.argv, got, tc.want)
		}
		if p := tracePod(o, "ns", "n1", "ns"); o.target.kind == kindNode && p.Labels["skbtrace.io/target-node"] != "n1" {
			t.Errorf("node label: %v", p.Labels)
		}
	}
	o, _ := parseArgs([]string{"pod/a"})
	if p := tracePod(o, "ns", "n1", "ns"); p.Spec.ActiveDeadlineSeconds != nil {
		t.Errorf("activeDeadlineSeconds without --timeout")
	}
}

// TestCapabilitiesFlag: --capabilities replaces the added set, in the
// security context's spelling.
func TestCapabilitiesFlag(t *testing.T) {
	o, err := parseArgs([]string{"pod/a", "--capabilities", "bpf,CAP_PERFMON,SYSLOG,SYS_PTRACE"})
	if err != nil {
		t.Fatal(err)
	}
	got := tracePod(o, "ns", "n1", "ns").Spec.Containers[0].SecurityContext.Capabilities.Add
	if want := []corev1.Capability{"BPF", "PERFMON", "SYSLOG", "SYS_PTRACE"}; !reflect.DeepEqual(got, want) {
		t.Errorf("added %v, want %v", got, want)
	}
}
