package lang

import (
	"strings"
	"testing"
)

func TestSuggest(t *testing.T) {
	cands := []string{"len", "dev", "dport", "sport", "tcp_v4_rcv", "ip_rcv"}
	tests := map[string]string{
		"lenn": "len", "dve": "dev", "dprot": "dport", "tcp_v4_rcvv": "tcp_v4_rcv",
		"x": "", "completely_different": "", "ip_rvc": "ip_rcv",
	}
	for in, want := range tests {
		if got := Suggest(in, cands); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", in, got, want)
		}
	}
}

// BenchmarkSuggestLongName guards the error path against a long misspelt
// name compared with every kernel function name.
func BenchmarkSuggestLongName(b *testing.B) {
	cands := make([]string, 60000)
	for i := range cands {
		cands[i] = strings.Repeat("f", 10+i%40)
	}
	name := strings.Repeat("a", 2000)
	for b.Loop() {
		Suggest(name, cands)
	}
}
