// Package k8stest runs real Kubernetes components for skbtrace's tests:
// Debian's containerd with its CRI plugin (Containerd), pods made through
// the CRI the way kubelet makes them (CRI.RunPod), and a single-node
// cluster of etcd, kube-apiserver and kubelet (Cluster). The images are
// built locally (Images): no registry is reached.
//
// Everything needs root. Each helper registers its teardown with
// t.Cleanup and leaves no process, mount, interface, cgroup or state file
// behind, so that several clusters can follow one another in one test
// binary. One containerd runs at a time on a machine: Containerd holds
// /tmp/skbtrace-containerd.lock until its cleanup ends. Tests that send
// traffic should also run under `flock /tmp/skbtrace-e2e.lock`.
//
// kube-apiserver and kubelet come from test/k8s/bins.sh (`make k8s-bins`),
// which builds them once per version into
// ${SKBTRACE_K8S_CACHE:-$HOME/.cache/skbtrace-k8s}/VERSION. The notes in
// the shared K8S.md explain the settings used here.
package k8stest
