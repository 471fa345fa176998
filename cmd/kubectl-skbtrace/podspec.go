package main

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The trace pod's fixed names and labels.
const (
	containerName  = "skbtrace"
	labelName      = "app.kubernetes.io/name"
	labelComponent = "app.kubernetes.io/component"
	annotTarget    = "skbtrace.io/target"
	cacheDir       = "/var/cache/skbtrace"
	tracefsDir     = "/sys/kernel/tracing"
	// traceGrace is the pod's terminationGracePeriodSeconds: the time
	// skbtrace has, after SIGTERM, to detach and print its maps.
	traceGrace = 10
)

// traceLabels are the labels every trace pod carries: a selector for
// them (kubectl get pods -l app.kubernetes.io/name=skbtrace,...) finds
// the pods this plugin made.
func traceLabels() map[string]string {
	return map[string]string{labelName: "skbtrace", labelComponent: "trace"}
}

// skbtraceArgs is the container's command line: --cri-socket, the pod
// filter for a pod target, -f and -w -, -e, the user's arguments after
// --, and the tool's name last (skbtrace takes its flags before the
// first positional argument).
func skbtraceArgs(o *options, podNS string) []string {
	args := []string{"--cri-socket", o.criSocket}
	if o.target.kind == kindPod {
		args = append(args, "--pod", podNS+"/"+o.target.name)
	}
	if o.format != "" {
		args = append(args, "-f", o.format)
	}
	if o.write != "" {
		args = append(args, "-w", "-")
	}
	if o.expr != "" {
		args = append(args, "-e", o.expr)
	}
	args = append(args, o.passthrough...)
	if o.tool != "" {
		args = append(args, o.tool)
	}
	return args
}

// tracePod is the short-lived pod that runs skbtrace on node in ns, with
// the least privileges deploy/kubernetes/daemonset.yaml explains, plus
// SYS_PTRACE (to read other processes' /proc/PID/ns/net and so learn the
// pods' network namespaces) and the node's CRI socket (to name pods).
func tracePod(o *options, ns, node, podNS string) *corev1.Pod {
	labels := traceLabels()
	k, v := o.target.podLabel()
	labels[k] = labelValue(v)
	full := o.target.String()
	if o.target.kind == kindPod {
		full = "pod/" + podNS + "/" + o.target.name
	}
	hostPathDir, hostPathSocket := corev1.HostPathDirectory, corev1.HostPathSocket
	grace := int64(traceGrace)
	no, yes := false, true
	root := int64(0)
	cacheLimit := resource.MustParse("16Mi")
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: "skbtrace-",
			Namespace:    ns,
			Labels:       labels,
			Annotations:  map[string]string{annotTarget: full},
		},
		Spec: corev1.PodSpec{
			NodeName:                      node,
			RestartPolicy:                 corev1.RestartPolicyNever,
			HostPID:                       true,
			HostNetwork:                   true,
			DNSPolicy:                     corev1.DNSClusterFirstWithHostNet,
			AutomountServiceAccountToken:  &no,
			EnableServiceLinks:            &no,
			TerminationGracePeriodSeconds: &grace,
			Tolerations:                   []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			SecurityContext: &corev1.PodSecurityContext{
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined},
			},
			Containers: []corev1.Container{{
				Name:            containerName,
				Image:           o.image,
				ImagePullPolicy: corev1.PullPolicy(o.pullPolicy),
				Args:            skbtraceArgs(o, podNS),
				Env:             []corev1.EnvVar{{Name: "XDG_CACHE_HOME", Value: cacheDir}},
				SecurityContext: &corev1.SecurityContext{
					Privileged:               &no,
					AllowPrivilegeEscalation: &no,
					ReadOnlyRootFilesystem:   &yes,
					RunAsUser:                &root,
					RunAsNonRoot:             &no,
					Capabilities: &corev1.Capabilities{
						Drop: []corev1.Capability{"ALL"},
						Add:  capabilities(o.caps),
					},
				},
				VolumeMounts: []corev1.VolumeMount{
					{Name: "tracefs", MountPath: tracefsDir, ReadOnly: true},
					{Name: "cache", MountPath: cacheDir},
					{Name: "cri", MountPath: o.criSocket},
				},
				TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
			}},
			Volumes: []corev1.Volume{
				{Name: "tracefs", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: tracefsDir, Type: &hostPathDir}}},
				{Name: "cache", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: &cacheLimit}}},
				{Name: "cri", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: o.criSocket, Type: &hostPathSocket}}},
			},
		},
	}
	if o.timeout > 0 {
		secs := int64((o.timeout + 999999999) / 1000000000)
		p.Spec.ActiveDeadlineSeconds = &secs
	}
	return p
}

// labelValue fits a name into a label value: 63 characters at most,
// starting and ending with a letter or digit.
func labelValue(s string) string {
	if len(s) > 63 {
		s = s[:63]
	}
	return strings.Trim(s, "-_.")
}

// capabilities are names as the container's security context takes them:
// upper case, without CAP_.
func capabilities(names []string) []corev1.Capability {
	var cs []corev1.Capability
	for _, n := range names {
		if n = strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(n)), "CAP_"); n != "" {
			cs = append(cs, corev1.Capability(n))
		}
	}
	return cs
}
