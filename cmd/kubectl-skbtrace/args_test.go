package main

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestParseArgs reads each form of the command line.
func TestParseArgs(t *testing.T) {
	for _, tc := range []struct {
		argv        []string
		target      target
		tool        string
		passthrough []string
		ns          string
	}{
		{[]string{"pod/web-0"}, target{kindPod, "web-0"}, "", nil, ""},
		{[]string{"pod/web-0", "-n", "shop", "--", "--filter", "tcp port 80"}, target{kindPod, "web-0"}, "", []string{"--filter", "tcp port 80"}, "shop"},
		{[]string{"-n", "shop", "pod/web-0", "whydrop"}, target{kindPod, "web-0"}, "whydrop", nil, "shop"},
		{[]string{"pod", "web-0", "whydrop"}, target{kindPod, "web-0"}, "whydrop", nil, ""},
		{[]string{"po/web-0"}, target{kindPod, "web-0"}, "", nil, ""},
		{[]string{"web-0", "--", "-e", "x"}, target{kindPod, "web-0"}, "", []string{"-e", "x"}, ""},
		{[]string{"node/worker-1", "-e", "skb:* { }"}, target{kindNode, "worker-1"}, "", nil, ""},
		{[]string{"node", "worker-1", "--", "--duration", "5s", "dropcount"}, target{kindNode, "worker-1"}, "", []string{"--duration", "5s", "dropcount"}, ""},
		{[]string{"nodes/worker-1", "dropcount"}, target{kindNode, "worker-1"}, "dropcount", nil, ""},
	} {
		o, err := parseArgs(tc.argv)
		if err != nil {
			t.Errorf("%q: %v", tc.argv, err)
			continue
		}
		if o.target != tc.target || o.tool != tc.tool || !reflect.DeepEqual(o.passthrough, tc.passthrough) || o.kube.Context.Namespace != tc.ns {
			t.Errorf("%q: target %v tool %q passthrough %q ns %q; want %v %q %q %q", tc.argv, o.target, o.tool, o.passthrough, o.kube.Context.Namespace, tc.target, tc.tool, tc.passthrough, tc.ns)
		}
	}
}

// TestParseArgsErrors: what the command line gets wrong is said.
func TestParseArgsErrors(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{nil, "name a pod or a node"},
		{[]string{"deploy/web"}, "not a deploy"},
		{[]string{"pod/"}, "name one pod"},
		{[]string{"node"}, "name the node"},
		{[]string{"pod/a", "whydrop", "extra"}, `unexpected arguments "extra"`},
		{[]string{"pod/a", "-o", "yaml"}, "-o takes text or json"},
		{[]string{"pod/a", "--image-pull-policy", "Sometimes"}, "--image-pull-policy takes"},
		{[]string{"pod/a", "--", "-w", "x.pcapng"}, "put it before --"},
		{[]string{"pod/a", "--bogus"}, "unknown flag"},
	} {
		_, err := parseArgs(tc.argv)
		var ue errUsage
		if err == nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want a usage error with %q", tc.argv, err, tc.want)
		}
	}
}

// TestVersionAndHelp: version and --help need no cluster.
func TestVersionAndHelp(t *testing.T) {
	for _, argv := range [][]string{{"version"}, {"--version"}} {
		var out, errb strings.Builder
		if code := run(argv, &out, &errb, nil, nil, nil); code != 0 || !strings.HasPrefix(out.String(), "kubectl-skbtrace ") {
			t.Errorf("%q: %d %q %q", argv, code, out.String(), errb.String())
		}
	}
	var out, errb strings.Builder
	if code := run([]string{"--help"}, &out, &errb, nil, nil, nil); code != 0 {
		t.Fatalf("--help: %d %s", code, errb.String())
	}
	for _, want := range []string{"kubectl skbtrace pod/NAME", "node/NAME", "--trace-namespace", "--write", "--kubeconfig", "--context", "--namespace", "--cri-socket"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--help lacks %q:\n%s", want, out.String())
		}
	}
}
