package rules

import "testing"

// TestObjectOf: the object a rule's chain or comment names, as the ruleset
// spells it, and none where it names none.
func TestObjectOf(t *testing.T) {
	for _, c := range []struct {
		table, chain, comment string
		want                  string // Object.String(), "" for none
	}{
		{"filter", "KUBE-SEP-ABC", "default/web:http", "service default/web:http (kube-proxy)"},
		{"filter", "KUBE-SERVICES", "kube-system/kube-dns:dns-tcp cluster IP", "service kube-system/kube-dns:dns-tcp (kube-proxy)"},
		{"filter", "KUBE-SERVICES", "default/gone:http has no endpoints", "service default/gone:http (kube-proxy)"},
		{"filter", "KUBE-SERVICES", "kubernetes service portals", ""},
		{"filter", "INPUT", "default/web:http", ""},
		{"kube-proxy", "service-ULMVA6XW-default/web/tcp/http", "", "service default/web:http (kube-proxy)"},
		{"kube-proxy", "endpoint-5OJB2KTY-default/web/tcp/http__10.244.0.5/80", "", "service default/web:http (kube-proxy)"},
		{"filter", "cali-pi-_kMe9Rkkm2yjcqXk1hmZ", "cali:Ux8hIdbxXaoGgDYc", "policy cali-pi-_kMe9Rkkm2yjcqXk1hmZ, rule cali:Ux8hIdbxXaoGgDYc (calico)"},
		{"filter", "cali-pri-kns.default", "", "profile cali-pri-kns.default (calico)"},
		{"filter", "KUBE-NWPLCY-C23KD7UE4TAT3Y5M", "rule to ACCEPT traffic from source pods to dest pods selected by policy name allow-web namespace default", "networkpolicy default/allow-web (kube-router)"},
		{"filter", "KUBE-POD-FW-3IBFIZTBGGHDPRMA", "rule to REJECT traffic destined for POD name:web-0 namespace: default", "pod default/web-0 (kube-router)"},
		{"filter", "ANTREA-FORWARD", "Antrea: accept packets from local Pods", "rule Antrea: accept packets from local Pods (antrea)"},
		{"inet web", "deny", "web deny", ""},
	} {
		got := ""
		if o := objectOf(c.table, c.chain, c.comment); o != nil {
			got = o.String()
		}
		if got != c.want {
			t.Errorf("objectOf(%q, %q, %q) = %q, want %q", c.table, c.chain, c.comment, got, c.want)
		}
	}
}
