// Package kubernetes holds skbtrace's Kubernetes manifests; its test decodes
// them strictly against the Kubernetes API types, no cluster needed.
package kubernetes

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// decodeStrict decodes a manifest into v as the API server's strict field
// validation does: YAML with no duplicate keys (sigs.k8s.io/yaml's
// YAMLToJSONStrict), then JSON whose every field v's type has, spelt in the
// same case (sigs.k8s.io/json's UnmarshalStrict; encoding/json, and so
// yaml.UnmarshalStrict, take hostPid for hostPID).
func decodeStrict(t *testing.T, file string, v any) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "\n---") {
		t.Fatalf("%s: one object a file", file)
	}
	if err := unmarshalStrict(data, v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

// unmarshalStrict is decodeStrict's decoding.
func unmarshalStrict(data []byte, v any) error {
	j, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return err
	}
	strict, err := kjson.UnmarshalStrict(j, v)
	if err != nil {
		return err
	}
	return errors.Join(strict...)
}

// manifests decodes every YAML file here by its kind; a kind the test does
// not know fails it, so that a new manifest gets checked too.
func manifests(t *testing.T) (ns *corev1.Namespace, sa *corev1.ServiceAccount, ds *appsv1.DaemonSet, resources []string) {
	files, err := filepath.Glob("*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		var tm metav1.TypeMeta
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(data, &tm); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		switch tm.APIVersion + " " + tm.Kind {
		case "v1 Namespace":
			ns = &corev1.Namespace{}
			decodeStrict(t, f, ns)
		case "v1 ServiceAccount":
			sa = &corev1.ServiceAccount{}
			decodeStrict(t, f, sa)
		case "apps/v1 DaemonSet":
			ds = &appsv1.DaemonSet{}
			decodeStrict(t, f, ds)
		case "kustomize.config.k8s.io/v1beta1 Kustomization":
			var k struct {
				APIVersion string   `json:"apiVersion"`
				Kind       string   `json:"kind"`
				Resources  []string `json:"resources"`
			}
			decodeStrict(t, f, &k)
			resources = k.Resources
		default:
			t.Fatalf("%s: %s %s: no check for this kind", f, tm.APIVersion, tm.Kind)
		}
	}
	if ns == nil || sa == nil || ds == nil || resources == nil {
		t.Fatalf("want a Namespace, a ServiceAccount, a DaemonSet and a Kustomization in %v", files)
	}
	// The kustomization applies every other manifest, and only those.
	var want []string
	for _, f := range files {
		if f != "kustomization.yaml" {
			want = append(want, f)
		}
	}
	if got := slices.Sorted(slices.Values(resources)); !slices.Equal(got, want) {
		t.Errorf("kustomization resources %v, want %v", got, want)
	}
	return ns, sa, ds, resources
}

func TestManifestsDecodeStrictly(t *testing.T) {
	ns, sa, ds, _ := manifests(t)
	if sa.Namespace != ns.Name || ds.Namespace != ns.Name {
		t.Errorf("namespaces: service account %q, DaemonSet %q, want %q", sa.Namespace, ds.Namespace, ns.Name)
	}
	if sa.AutomountServiceAccountToken == nil || *sa.AutomountServiceAccountToken {
		t.Error("the service account mounts a token: skbtrace reads nothing from the API")
	}
	// The host's PID and network namespaces; no API token.
	spec := ds.Spec.Template.Spec
	if !spec.HostPID || !spec.HostNetwork {
		t.Errorf("hostPID %v, hostNetwork %v: want both", spec.HostPID, spec.HostNetwork)
	}
	if spec.ServiceAccountName != sa.Name {
		t.Errorf("serviceAccountName %q, want %q", spec.ServiceAccountName, sa.Name)
	}
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		t.Error("the pod mounts a service account token")
	}
	// The selector selects the template.
	sel, err := metav1.LabelSelectorAsMap(ds.Spec.Selector)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range sel {
		if ds.Spec.Template.Labels[k] != v {
			t.Errorf("selector %s=%s does not match the template's labels %v", k, v, ds.Spec.Template.Labels)
		}
	}
	// Every node: one toleration of every taint.
	if len(spec.Tolerations) != 1 || spec.Tolerations[0].Operator != corev1.TolerationOpExists ||
		spec.Tolerations[0].Key != "" || spec.Tolerations[0].Effect != "" {
		t.Errorf("tolerations %+v, want one {operator: Exists} (every taint)", spec.Tolerations)
	}
	if spec.SecurityContext == nil || spec.SecurityContext.SeccompProfile == nil ||
		spec.SecurityContext.SeccompProfile.Type != corev1.SeccompProfileTypeUnconfined {
		t.Error("seccomp: want Unconfined (default profiles refuse bpf() without CAP_SYS_ADMIN)")
	}

	if len(spec.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(spec.Containers))
	}
	c := spec.Containers[0]
	if !strings.HasPrefix(c.Image, "ghcr.io/skbtrace/skbtrace:") {
		t.Errorf("image %q, want ghcr.io/skbtrace/skbtrace:TAG (make image's IMAGE)", c.Image)
	}
	if c.ImagePullPolicy != corev1.PullIfNotPresent {
		t.Errorf("imagePullPolicy %q, want IfNotPresent", c.ImagePullPolicy)
	}
	if len(c.Command) != 0 {
		t.Errorf("command %v overrides the image's entrypoint", c.Command)
	}
	if !slices.Equal(c.Args, []string{"--metrics", ":9464", "--web.config.file", webConfigMount + "/web-config.yml", "--metrics-max-series", "10000", "dropcount"}) {
		t.Errorf("args %v: want dropcount under --metrics :9464, secured by the web config in %s, its series bounded", c.Args, webConfigMount)
	}

	// Least privilege: not privileged, every capability dropped but these.
	sc := c.SecurityContext
	if sc == nil || sc.Capabilities == nil {
		t.Fatal("the container has no securityContext with capabilities")
	}
	if sc.Privileged != nil && *sc.Privileged {
		t.Error("the container is privileged")
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Error("allowPrivilegeEscalation is not false")
	}
	if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Error("readOnlyRootFilesystem is not true")
	}
	if !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("capabilities drop %v, want [ALL]", sc.Capabilities.Drop)
	}
	wantCaps := []corev1.Capability{"BPF", "PERFMON", "SYSLOG", "SYS_PTRACE", "SYS_RESOURCE"}
	if got := slices.Sorted(slices.Values(sc.Capabilities.Add)); !slices.Equal(got, wantCaps) {
		t.Errorf("capabilities add %v, want %v", got, wantCaps)
	}

	// Mounts: tracefs read-only from the host, the cache an emptyDir.
	vols := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		vols[v.Name] = v
	}
	mounts := map[string]corev1.VolumeMount{}
	for _, m := range c.VolumeMounts {
		if _, ok := vols[m.Name]; !ok {
			t.Errorf("mount %s: no volume of that name", m.Name)
		}
		mounts[m.MountPath] = m
	}
	tr, ok := mounts["/sys/kernel/tracing"]
	if !ok || !tr.ReadOnly || vols[tr.Name].HostPath == nil || vols[tr.Name].HostPath.Path != "/sys/kernel/tracing" {
		t.Errorf("want the host's /sys/kernel/tracing mounted read-only at /sys/kernel/tracing: %+v", tr)
	}
	for path, m := range mounts {
		if hp := vols[m.Name].HostPath; hp != nil && !m.ReadOnly {
			t.Errorf("host path %s is mounted writable at %s", hp.Path, path)
		}
	}
	var cache string
	for _, e := range c.Env {
		if e.Name == "XDG_CACHE_HOME" {
			cache = e.Value
		}
	}
	if m, ok := mounts[cache]; cache == "" || !ok || vols[m.Name].EmptyDir == nil {
		t.Errorf("XDG_CACHE_HOME %q: want it an emptyDir mount (the root is read-only)", cache)
	}
	// The web config, its certificate and key: Secret skbtrace-web-config's
	// keys, read-only, readable by the owner alone.
	wm, ok := mounts[webConfigMount]
	secret := vols[wm.Name].Secret
	if !ok || !wm.ReadOnly || secret == nil || secret.SecretName != webConfigSecret ||
		secret.DefaultMode == nil || *secret.DefaultMode != 0o400 || (secret.Optional != nil && *secret.Optional) {
		t.Errorf("want Secret %s mounted read-only at %s, mode 0400, not optional: %+v %+v", webConfigSecret, webConfigMount, wm, secret)
	} else {
		var keys []string
		for _, it := range secret.Items {
			if it.Key != it.Path {
				t.Errorf("secret item %s mounted as %s: web-config.yml names the files by their keys", it.Key, it.Path)
			}
			keys = append(keys, it.Key)
		}
		if !slices.Equal(keys, webConfigKeys) {
			t.Errorf("secret items %v, want %v", keys, webConfigKeys)
		}
	}

	// Requests and limits for both CPU and memory, requests within limits.
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, lim := c.Resources.Requests[r], c.Resources.Limits[r]
		if req.IsZero() || lim.IsZero() || req.Cmp(lim) > 0 {
			t.Errorf("%s: request %s, limit %s: want both, the request within the limit", r, req.String(), lim.String())
		}
	}
	if lim := c.Resources.Limits[corev1.ResourceMemory]; lim.Cmp(resource.MustParse("128Mi")) < 0 {
		t.Errorf("memory limit %s: skb:* scripts peak near 70 MiB reading BTF", lim.String())
	}

	// The metrics port, and the annotations that point Prometheus at it.
	var port int32
	for _, p := range c.Ports {
		if p.Name == "metrics" {
			port = p.ContainerPort
		}
	}
	ann := ds.Spec.Template.Annotations
	if port == 0 || ann["prometheus.io/scrape"] != "true" || ann["prometheus.io/port"] != "9464" || port != 9464 || ann["prometheus.io/path"] != "/metrics" || ann["prometheus.io/scheme"] != "https" {
		t.Errorf("metrics port %d, annotations %v: want port 9464 named metrics, scraped at https://.../metrics", port, ann)
	}
}

// podMonitor is the part of the Prometheus operator's PodMonitor
// (monitoring.coreos.com/v1) that podmonitor.yaml uses: decoding it
// strictly fails on any other field, a misspelt one included.
type podMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Selector  metav1.LabelSelector `json:"selector"`
		Endpoints []struct {
			Port      string `json:"port"`
			Path      string `json:"path"`
			Interval  string `json:"interval"`
			Scheme    string `json:"scheme"`
			TLSConfig struct {
				CA struct {
					Secret corev1.SecretKeySelector `json:"secret"`
				} `json:"ca"`
				ServerName string `json:"serverName"`
			} `json:"tlsConfig"`
			BasicAuth struct {
				Username corev1.SecretKeySelector `json:"username"`
				Password corev1.SecretKeySelector `json:"password"`
			} `json:"basicAuth"`
			Relabelings []struct {
				SourceLabels []string `json:"sourceLabels"`
				TargetLabel  string   `json:"targetLabel"`
			} `json:"relabelings"`
		} `json:"podMetricsEndpoints"`
	} `json:"spec"`
}

// TestPodMonitor checks the PodMonitor selects the DaemonSet's pods in its
// namespace and scrapes their metrics port at /metrics.
func TestPodMonitor(t *testing.T) {
	_, _, ds, _ := manifests(t)
	var pm podMonitor
	decodeStrict(t, "prometheus-operator/podmonitor.yaml", &pm)
	if pm.APIVersion != "monitoring.coreos.com/v1" || pm.Kind != "PodMonitor" || pm.Namespace != ds.Namespace {
		t.Errorf("%s %s in %q, want monitoring.coreos.com/v1 PodMonitor in %q", pm.APIVersion, pm.Kind, pm.Namespace, ds.Namespace)
	}
	sel, err := metav1.LabelSelectorAsSelector(&pm.Spec.Selector)
	if err != nil || sel.Empty() || !sel.Matches(labels.Set(ds.Spec.Template.Labels)) {
		t.Errorf("selector %v (%v) does not select the pods' labels %v", pm.Spec.Selector, err, ds.Spec.Template.Labels)
	}
	ports := map[string]bool{}
	for _, p := range ds.Spec.Template.Spec.Containers[0].Ports {
		ports[p.Name] = true
	}
	if len(pm.Spec.Endpoints) != 1 || !ports[pm.Spec.Endpoints[0].Port] || pm.Spec.Endpoints[0].Path != "/metrics" {
		t.Errorf("endpoints %+v: want the pods' metrics port at /metrics", pm.Spec.Endpoints)
	}
	ep := pm.Spec.Endpoints[0]
	if _, err := time.ParseDuration(ep.Interval); err != nil {
		t.Errorf("interval: %v", err)
	}
	// https, the CA and server name of web-config.sh's certificate, the
	// user and password: Secret skbtrace-scrape's keys.
	ref := func(s corev1.SecretKeySelector) string { return s.Name + "/" + s.Key }
	got := []string{ep.Scheme, ep.TLSConfig.ServerName, ref(ep.TLSConfig.CA.Secret), ref(ep.BasicAuth.Username), ref(ep.BasicAuth.Password)}
	want := []string{"https", serverName, scrapeSecret + "/ca.crt", scrapeSecret + "/username", scrapeSecret + "/password"}
	if !slices.Equal(got, want) {
		t.Errorf("scheme, serverName, CA, username, password: %v, want %v", got, want)
	}
}

// TestManifestsRejectUnknownFields shows the decoding is strict: a field the
// API types lack, as a typo makes, fails it.
func TestManifestsRejectUnknownFields(t *testing.T) {
	data, err := os.ReadFile("daemonset.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ from, to, field string }{
		{"hostPID: true", "hostPid: true", "hostPid"},
		{"tolerations:", "toleration:", "toleration"},
		{"      hostNetwork: true\n", "      hostNetwork: true\n      hostNetwork: true\n", "hostNetwork"},
	} {
		bad := strings.Replace(string(data), c.from, c.to, 1)
		if bad == string(data) {
			t.Fatalf("daemonset.yaml has no %q", c.from)
		}
		var ds appsv1.DaemonSet
		if err := unmarshalStrict([]byte(bad), &ds); err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("a DaemonSet with %q decoded: %v", c.to, err)
		}
	}
}
