package main

import (
	"fmt"
	"strings"
)

// kind is what a target names.
type kind string

// The two kinds of target.
const (
	kindPod  kind = "pod"
	kindNode kind = "node"
)

// target is a pod or a node as the command line names it.
type target struct {
	kind kind
	name string
}

func (t target) String() string { return string(t.kind) + "/" + t.name }

// kinds maps the names kubectl accepts for pods and nodes to a kind.
var kinds = map[string]kind{
	"pod": kindPod, "pods": kindPod, "po": kindPod,
	"node": kindNode, "nodes": kindNode, "no": kindNode,
}

// parseTarget reads the target at the start of args (KIND/NAME, KIND NAME
// or a bare pod NAME) and returns what follows it.
func parseTarget(args []string) (target, []string, error) {
	a := args[0]
	if k, name, ok := strings.Cut(a, "/"); ok {
		kd, known := kinds[strings.ToLower(k)]
		if !known {
			return target{}, nil, usageError("%q: skbtrace traces a pod or a node (pod/NAME, node/NAME), not a %s", a, k)
		}
		if name == "" || strings.Contains(name, "/") {
			return target{}, nil, usageError("%q: name one %s, as in %s/NAME", a, kd, kd)
		}
		return target{kd, name}, args[1:], nil
	}
	if kd, known := kinds[strings.ToLower(a)]; known {
		if len(args) < 2 {
			return target{}, nil, usageError("name the %s to trace: %s NAME", kd, a)
		}
		return target{kd, args[1]}, args[2:], nil
	}
	if strings.HasPrefix(a, "-") {
		return target{}, nil, usageError("unknown flag %q", a)
	}
	return target{kindPod, a}, args[1:], nil
}

// podLabel is the label on a trace pod naming what it traces.
func (t target) podLabel() (string, string) {
	return "skbtrace.io/target-" + string(t.kind), t.name
}

// describe names the target in messages: pod "web-0" in namespace "default".
func (t target) describe(ns string) string {
	if t.kind == kindPod {
		return fmt.Sprintf("pod %q in namespace %q", t.name, ns)
	}
	return fmt.Sprintf("node %q", t.name)
}
