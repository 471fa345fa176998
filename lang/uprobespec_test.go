package lang_test

import (
	"strings"
	"testing"

	"github.com/skbtrace/skbtrace/lang"
)

// TestUprobeSpecs checks how uprobe and uretprobe targets split into the
// binary, the function (or glob), an offset and an address, and that
// malformed ones are errors at the spec.
func TestUprobeSpecs(t *testing.T) {
	for _, tc := range []struct {
		text string
		want lang.ProbeSpec // Kind, Binary, Name, Offset, Address
		err  string
	}{
		{text: "uprobe:/bin/bash:readline", want: lang.ProbeSpec{Kind: lang.ProbeUprobe, Binary: "/bin/bash", Name: "readline"}},
		{text: "uretprobe:libc:getaddrinfo", want: lang.ProbeSpec{Kind: lang.ProbeUretprobe, Binary: "libc", Name: "getaddrinfo"}},
		{text: "u:bash:legal_num*", want: lang.ProbeSpec{Kind: lang.ProbeUprobe, Binary: "bash", Name: "legal_num*"}},
		{text: "ur:libssl:SSL_read", want: lang.ProbeSpec{Kind: lang.ProbeUretprobe, Binary: "libssl", Name: "SSL_read"}},
		{text: "uprobe:libc:malloc+0x10", want: lang.ProbeSpec{Kind: lang.ProbeUprobe, Binary: "libc", Name: "malloc", Offset: 16}},
		{text: "uprobe:libc:malloc+8", want: lang.ProbeSpec{Kind: lang.ProbeUprobe, Binary: "libc", Name: "malloc", Offset: 8}},
		{text: "uprobe:/bin/bash:0x3ec70", want: lang.ProbeSpec{Kind: lang.ProbeUprobe, Binary: "/bin/bash", Address: 0x3ec70}},
		{text: "uretprobe:libc:malloc+8", err: "1:1: uretprobe:libc:malloc+8: a uretprobe cannot take an offset"},
		{text: "uprobe:libc:malloc+x", err: `1:1: invalid offset in "uprobe:libc:malloc+x"`},
		{text: "uprobe:libc:mal*+4", err: `1:1: invalid offset in "uprobe:libc:mal*+4"`},
		{text: "uprobe:/bin/bash", err: `1:1: invalid uprobe "uprobe:/bin/bash"`},
		{text: "uprobe::readline", err: `1:1: invalid uprobe "uprobe::readline"`},
		{text: "uprobe:/bin/bash:", err: `1:1: invalid uprobe "uprobe:/bin/bash:"`},
		{text: "uprobe:/usr/lib/*/libc.so.6:malloc", err: "1:1: uprobe:/usr/lib/*/libc.so.6:malloc: a glob in the binary is not supported"},
		{text: "uprobe:/bin/prog:cpp:ns::f", err: `1:1: invalid uprobe "uprobe:/bin/prog:cpp:ns::f"`},
		{text: "uprobe:/bin/prog:cpp:f", err: "1:1: uprobe:/bin/prog:cpp:f: language-qualified functions (cpp) are not supported"},
	} {
		t.Run(tc.text, func(t *testing.T) {
			script, err := lang.Parse(&lang.Source{Name: "u.st", Text: tc.text + " { exit() }"})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("want error %q, got %v", tc.err, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			s := script.Probes[0].Specs[0]
			got := lang.ProbeSpec{Kind: s.Kind, Binary: s.Binary, Name: s.Name, Offset: s.Offset, Address: s.Address}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
			if s.Text != tc.text {
				t.Errorf("text %q", s.Text)
			}
		})
	}
}
