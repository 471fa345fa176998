package output

import (
	"testing"

	"github.com/cilium/ebpf/btf"

	// The -update flag of golden files is defined there; `go test ./... -update` needs every package to accept it.
	_ "github.com/skbtrace/skbtrace/internal/golden"
	"github.com/skbtrace/skbtrace/lang/types"
	"github.com/skbtrace/skbtrace/runtime/kernel"
)

func TestFormatInt(t *testing.T) {
	reasons := &btf.Enum{Name: "skb_drop_reason", Size: 4, Values: []btf.EnumValue{
		{Name: "SKB_NOT_DROPPED_YET", Value: 0}, {Name: "SKB_DROP_REASON_NOT_SPECIFIED", Value: 2},
		{Name: "SKB_DROP_REASON_NO_SOCKET", Value: 3}, {Name: "SKB_DROP_REASON_TCP_CSUM", Value: 10},
	}}
	f := NewValues()
	tests := []struct {
		v    uint64
		t    types.Type
		want string
	}{
		{42, types.U32, "42"},
		{^uint64(0), types.S64, "-1"},
		{0xdeadbeef, types.Type{Kind: types.Int, Size: 4, Fmt: types.FmtHex}, "0xdeadbeef"},
		{1, types.Bool, "true"},
		{0x86dd, types.Type{Kind: types.Int, Fmt: types.FmtEtherType}, "ipv6"},
		{0x0800, types.Type{Kind: types.Int, Fmt: types.FmtEtherType}, "ipv4"},
		{17, types.Type{Kind: types.Int, Fmt: types.FmtIPProto}, "udp"},
		{250, types.Type{Kind: types.Int, Fmt: types.FmtIPProto}, "250"},
		{0x12, types.Type{Kind: types.Int, Fmt: types.FmtTCPFlags}, "SYN|ACK"},
		{0, types.Type{Kind: types.Int, Fmt: types.FmtTCPFlags}, "0"},
		{4, types.Type{Kind: types.Int, Fmt: types.FmtPktType}, "outgoing"},
		{3, types.Type{Kind: types.Int, Fmt: types.FmtEnum, BTF: reasons}, "NO_SOCKET"},
		{99, types.Type{Kind: types.Int, Fmt: types.FmtEnum, BTF: reasons}, "99"},
	}
	for _, tt := range tests {
		if got := f.formatInt(tt.v, tt.t); got != tt.want {
			t.Errorf("formatInt(%d, %v) = %q, want %q", tt.v, tt.t, got, tt.want)
		}
	}
}

func TestHistLabels(t *testing.T) {
	tests := []struct {
		i     int64
		lhist *[3]int64
		want  string
	}{
		{0, nil, "(..., 0)"}, {1, nil, "[0]"}, {2, nil, "[1]"}, {3, nil, "[2, 4)"}, {12, nil, "[1K, 2K)"}, {22, nil, "[1M, 2M)"},
		{0, &[3]int64{0, 100, 10}, "(..., 0)"}, {1, &[3]int64{0, 100, 10}, "[0, 10)"},
		{10, &[3]int64{0, 100, 10}, "[90, 100)"}, {11, &[3]int64{0, 100, 10}, "[100, ...)"},
		{2, &[3]int64{-5, 5, 3}, "[-2, 1)"}, {4, &[3]int64{-5, 5, 3}, "[4, 5)"}, {5, &[3]int64{-5, 5, 3}, "[5, ...)"},
		{3, &[3]int64{0, 5, 1}, "[2]"},
	}
	for _, tt := range tests {
		if got := histLabel(tt.i, histSpec{lhist: tt.lhist}); got != tt.want {
			t.Errorf("histLabel(%d, %v) = %q, want %q", tt.i, tt.lhist, got, tt.want)
		}
	}
}

func TestFormatAddr(t *testing.T) {
	v4 := make([]byte, 24)
	copy(v4, []byte{10, 1, 2, 3})
	v4[16] = 4
	v6 := make([]byte, 24)
	v6[15], v6[16] = 1, 6
	none := make([]byte, 24)
	for raw, want := range map[*[]byte]string{&v4: "10.1.2.3", &v6: "::1", &none: "-"} {
		if got := formatAddr(*raw); got != want {
			t.Errorf("formatAddr = %q, want %q", got, want)
		}
	}
}

// TestFormatProbe: probe's values are an index into the script's probe
// names from 1, or a function's address, bit 63 cleared on a return
// program (codegen/probename.go).
func TestFormatProbe(t *testing.T) {
	f := NewValues()
	f.probeNames = []string{"BEGIN", "tracepoint:skb:kfree_skb"}
	f.ksyms = kernel.NewSymbols([]uint64{0xffffffff81000000}, []string{"ip_rcv"})
	probe := types.Type{Kind: types.Int, Size: 8, Fmt: types.FmtProbe}
	for v, want := range map[uint64]string{
		1: "BEGIN", 2: "tracepoint:skb:kfree_skb",
		0xffffffff81000000: "kprobe:ip_rcv", 0x7fffffff81000000: "kretprobe:ip_rcv",
		0: "kprobe:?", 3: "kprobe:?",
	} {
		if got := f.formatInt(v, probe); got != want {
			t.Errorf("probe %#x = %q, want %q", v, got, want)
		}
	}
}

// TestFormatBuf: buf()'s bytes print as bpftrace prints a buffer, up to
// the length in the first byte.
func TestFormatBuf(t *testing.T) {
	f := NewValues()
	buf := types.Type{Kind: types.String, Size: 8, Fmt: types.FmtBuf}
	if got, want := f.value(buf, []byte{5, 'E', 0, '\\', '!', 0xff, 'x', 'y'}), `E\x00\!\xff`; got != want {
		t.Errorf("buf = %q, want %q", got, want)
	}
}
