// Package rbac holds the RBAC a user of kubectl skbtrace needs (rbac.yaml);
// its test decodes it as the API server would and checks what it grants
// against what the plugin does.
package rbac

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// TestRBAC decodes each object of rbac.yaml strictly and checks that the
// Role grants what kubectl-skbtrace calls (get, list, watch, create and
// delete on pods; get on pods/log; create on pods/attach), the
// ClusterRole get on nodes, and that each binding names its role.
func TestRBAC(t *testing.T) {
	data, err := os.ReadFile("rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.Role
	var cluster rbacv1.ClusterRole
	var bindings []rbacv1.RoleRef
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			t.Fatal(err)
		}
		switch tm.Kind {
		case "Role":
			decode(t, doc, &role)
		case "ClusterRole":
			decode(t, doc, &cluster)
		case "RoleBinding":
			var b rbacv1.RoleBinding
			decode(t, doc, &b)
			bindings = append(bindings, b.RoleRef)
		case "ClusterRoleBinding":
			var b rbacv1.ClusterRoleBinding
			decode(t, doc, &b)
			bindings = append(bindings, b.RoleRef)
		default:
			t.Fatalf("rbac.yaml: %s %s: no check for this kind", tm.APIVersion, tm.Kind)
		}
	}
	grants := func(rules []rbacv1.PolicyRule, resource, verb string) bool {
		for _, r := range rules {
			if slices.Contains(r.APIGroups, "") && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) {
				return true
			}
		}
		return false
	}
	for _, want := range [][2]string{{"pods", "get"}, {"pods", "list"}, {"pods", "watch"}, {"pods", "create"}, {"pods", "delete"}, {"pods/log", "get"}, {"pods/attach", "create"}} {
		if !grants(role.Rules, want[0], want[1]) {
			t.Errorf("the Role does not grant %s on %s", want[1], want[0])
		}
	}
	if !grants(cluster.Rules, "nodes", "get") {
		t.Error("the ClusterRole does not grant get on nodes")
	}
	for _, ref := range bindings {
		if ref.Name != role.Name && ref.Name != cluster.Name {
			t.Errorf("a binding names role %q, which rbac.yaml does not define", ref.Name)
		}
	}
}

func decode(t *testing.T, doc string, v any) {
	t.Helper()
	j, err := yaml.YAMLToJSONStrict([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	strict, err := kjson.UnmarshalStrict(j, v)
	if err == nil {
		err = errors.Join(strict...)
	}
	if err != nil {
		t.Fatalf("rbac.yaml: %v", err)
	}
}
