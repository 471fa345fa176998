package session

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
)

// TestCloseLinksClosesEveryLink attaches one tp_btf program 300 times and
// closes the links many at a time: every link is gone from the kernel
// afterwards, and the progress line counted them all.
func TestCloseLinksClosesEveryLink(t *testing.T) {
	prog, err := ebpf.NewProgramWithOptions(&ebpf.ProgramSpec{Type: ebpf.Tracing, AttachType: ebpf.AttachTraceRawTp, AttachTo: "kfree_skb",
		License: "GPL", Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()}}, ebpf.ProgramOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	const n = 300
	var links []link.Link
	var ids []link.ID
	for range n {
		l, err := link.AttachTracing(link.TracingOptions{Program: prog, AttachType: ebpf.AttachTraceRawTp})
		if err != nil {
			for _, l := range links {
				l.Close()
			}
			t.Fatal(err)
		}
		info, err := l.Info()
		if err != nil {
			t.Fatal(err)
		}
		links, ids = append(links, l), append(ids, info.ID)
	}
	var w bytes.Buffer
	closeLinks(links, &w)
	for _, id := range ids {
		if l, err := link.NewFromID(id); err == nil {
			l.Close()
			t.Fatalf("link %d is still in the kernel after closeLinks", id)
		}
	}
	if !strings.HasSuffix(w.String(), "\rskbtrace: detaching 300/300\033[K\r\033[K") {
		t.Errorf("progress ends with %q", w.String()[max(0, w.Len()-60):])
	}
}
