package output

import (
	"encoding/binary"
	"os/exec"
	"strings"
	"testing"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/internal/pcaptest"
)

// pktValue is the pkt value the code generator writes for a frame.
func pktValue(frame []byte, synth uint32) []byte {
	raw := make([]byte, codegen.PacketSize)
	le := binary.LittleEndian
	n := min(len(frame), codegen.PacketBytes)
	le.PutUint32(raw[codegen.PacketSynth:], synth)
	le.PutUint32(raw[codegen.PacketOrigLen:], uint32(len(frame)))
	le.PutUint32(raw[codegen.PacketLen:], uint32(n))
	copy(raw[codegen.PacketData:], frame[:n])
	return raw
}

// TestDecodeLikeTcpdump decodes pcaptest's frames as pkt values and
// compares each line with `tcpdump -nn -t -S`'s, for the frames whose
// protocols the decode covers (TCP, UDP, ICMP echo, ICMPv6 echo, ARP, over
// VLAN too, and in VXLAN and Geneve, whose inner packet tcpdump prints on
// a line of its own, the decode after a space); tcpdump's
// application-layer suffix (": HTTP") is left out.
func TestDecodeLikeTcpdump(t *testing.T) {
	frames := pcaptest.Frames()
	file, err := pcaptest.WriteFile(t.TempDir(), "frames.pcap")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("tcpdump", "-r", file, "-nn", "-tt", "-S").Output()
	if err != nil {
		t.Fatalf("tcpdump: %v", err)
	}
	// A packet's line starts with its time, 1700000000+i.
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if at, rest, ok := strings.Cut(l, ".000000 "); ok && strings.HasPrefix(at, "17") {
			lines = append(lines, rest)
		} else if len(lines) > 0 {
			lines[len(lines)-1] += " " + l
		}
	}
	if len(lines) != len(frames) {
		t.Fatalf("tcpdump printed %d packets for %d frames", len(lines), len(frames))
	}
	covered := []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 11, 16, 18, 21, 22, 24, 25, 29, 30, 31,
		35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 48, 49, 50, 51, 52, 53, 54, 55}
	for _, i := range covered {
		want := strings.TrimSuffix(lines[i], ": HTTP")
		if got := string(appendPacket(nil, pktValue(frames[i], 0))); got != want {
			t.Errorf("frame %d:\n got %s\nwant %s", i, got, want)
		}
	}
	// A packet without a link header yet: the synthesized one's type.
	noLink := append(make([]byte, 14), frames[8][14:]...)
	if got, want := string(appendPacket(nil, pktValue(noLink, 0x10000|0x0800))), lines[8]; got != want {
		t.Errorf("synthesized header:\n got %s\nwant %s", got, want)
	}
}
