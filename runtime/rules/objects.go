package rules

import (
	"regexp"
	"strings"
)

// Object is what a rule's chain name or comment says it was made for: a
// Kubernetes service, a NetworkPolicy, a pod, a Calico policy. Only what
// the ruleset spells out, never a guess.
type Object struct {
	Kind   string // service, networkpolicy, pod, policy, profile
	Name   string // namespace/name[:port], as the ruleset writes it
	Source string // who wrote the rule: kube-proxy, calico, kube-router, antrea
}

// String is the object as whydrop prints it: service default/web:http (kube-proxy).
func (o Object) String() string { return o.Kind + " " + o.Name + " (" + o.Source + ")" }

var (
	// kube-proxy's iptables comments start with the service port:
	// "default/web:http", "default/web:http cluster IP",
	// "default/web:http has no endpoints".
	kubeProxyComment = regexp.MustCompile(`^([a-z0-9][-a-z0-9]*)/([a-z0-9][-a-z0-9.]*)(:[-a-zA-Z0-9_.]*)?(\s|$)`)
	// kube-proxy's nftables chains: service-HASH-NS/NAME/PROTO/PORT,
	// endpoint-HASH-NS/NAME/PROTO/PORT__IP/PORT, external-HASH-...
	kubeProxyChain   = regexp.MustCompile(`^(?:service|endpoint|external)-[A-Z0-9]+-([a-z0-9][-a-z0-9]*)/([a-z0-9][-a-z0-9.]*)/[a-z]+/([-a-zA-Z0-9]*)`)
	kubeRouterPolicy = regexp.MustCompile(`policy name:? ?(\S+) namespace:? ?(\S+)`)
	kubeRouterPod    = regexp.MustCompile(`POD name:? ?(\S+) namespace:? ?(\S+)`)
)

// objectOf reads the object behind a rule from its chain and comment.
func objectOf(table, chain, comment string) *Object {
	switch {
	case strings.HasPrefix(chain, "KUBE-NWPLCY-") || strings.HasPrefix(chain, "KUBE-POD-FW-") || strings.HasPrefix(chain, "KUBE-ROUTER-"):
		if m := kubeRouterPolicy.FindStringSubmatch(comment); m != nil {
			return &Object{Kind: "networkpolicy", Name: m[2] + "/" + m[1], Source: "kube-router"}
		}
		if m := kubeRouterPod.FindStringSubmatch(comment); m != nil {
			return &Object{Kind: "pod", Name: m[2] + "/" + m[1], Source: "kube-router"}
		}
	case strings.HasPrefix(chain, "KUBE-"):
		if m := kubeProxyComment.FindStringSubmatch(comment); m != nil {
			return &Object{Kind: "service", Name: m[1] + "/" + m[2] + m[3], Source: "kube-proxy"}
		}
	case table == "kube-proxy":
		if m := kubeProxyChain.FindStringSubmatch(chain); m != nil {
			return &Object{Kind: "service", Name: m[1] + "/" + m[2] + ":" + m[3], Source: "kube-proxy"}
		}
	case strings.HasPrefix(chain, "cali-") || strings.HasPrefix(comment, "cali:"):
		kind := "chain"
		switch {
		case strings.HasPrefix(chain, "cali-pi-") || strings.HasPrefix(chain, "cali-po-"):
			kind = "policy"
		case strings.HasPrefix(chain, "cali-pri-") || strings.HasPrefix(chain, "cali-pro-"):
			kind = "profile"
		}
		name := chain
		if strings.HasPrefix(comment, "cali:") {
			name += ", rule " + strings.Fields(comment)[0]
		}
		return &Object{Kind: kind, Name: name, Source: "calico"}
	case strings.HasPrefix(chain, "ANTREA-") || strings.HasPrefix(comment, "Antrea:"):
		if comment != "" {
			return &Object{Kind: "rule", Name: comment, Source: "antrea"}
		}
	}
	return nil
}
