package lang

import (
	"reflect"
	"testing"
)

// TestInspectVisitsEveryIdent checks that Inspect reaches names in the
// predicate, keys, values, call arguments, conditions and else branches.
func TestInspectVisitsEveryIdent(t *testing.T) {
	s, err := Parse(&Source{Name: "t.st", Text: `skb:* /a == 1/ { @m[b, c->d] = count(); if (e) { print(f ? g : h[i]) } else { $x = -(j) } }`})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	Inspect(s, func(n Node) bool {
		if id, ok := n.(*Ident); ok {
			got = append(got, id.Name)
		}
		return true
	})
	want := []string{"a", "b", "c", "e", "f", "g", "h", "i", "j"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("visited %v, want %v", got, want)
	}
}
