package bpfprogtest

import (
	"encoding/binary"
	"testing"

	"github.com/cilium/ebpf"
)

// frame is an Ethernet frame of an IPv4 UDP datagram to port, or, with
// proto 6, a TCP segment's first bytes.
func frame(proto byte, port uint16) []byte {
	b := make([]byte, 14+20+8+8)
	binary.BigEndian.PutUint16(b[12:], 0x0800)
	ip := b[14:]
	ip[0], ip[8], ip[9] = 0x45, 64, proto
	binary.BigEndian.PutUint16(ip[2:], uint16(len(ip)))
	copy(ip[12:], []byte{127, 0, 0, 1, 127, 0, 0, 1})
	binary.BigEndian.PutUint16(ip[20:], 40000)
	binary.BigEndian.PutUint16(ip[22:], port)
	binary.BigEndian.PutUint16(ip[24:], 16)
	return b
}

// TestDropPort runs each program on frames (BPF_PROG_TEST_RUN): its drop
// verdict for UDP to its port, its pass verdict for UDP to another port
// and for TCP to the same.
func TestDropPort(t *testing.T) {
	for _, c := range []struct {
		spec       *ebpf.ProgramSpec
		drop, pass uint32
	}{
		{TCDropPort("bt_tc", 9), TCActShot, TCActOK},
		{XDPDropPort("bt_xdp", 9), XDPDrop, XDPPass},
		{CgroupSkbDropPort("bt_cg", 9), SKDrop, SKPass},
	} {
		prog, err := ebpf.NewProgram(c.spec)
		if err != nil {
			t.Fatalf("load %s: %v", c.spec.Name, err)
		}
		for _, f := range []struct {
			data []byte
			want uint32
		}{{frame(17, 9), c.drop}, {frame(17, 10), c.pass}, {frame(6, 9), c.pass}} {
			ret, err := prog.Run(&ebpf.RunOptions{Data: f.data})
			if err != nil {
				t.Fatalf("run %s: %v", c.spec.Name, err)
			}
			if ret != f.want {
				t.Errorf("%s on proto %d port %d: %d, want %d", c.spec.Name, f.data[14+9], binary.BigEndian.Uint16(f.data[14+22:]), ret, f.want)
			}
		}
		prog.Close()
	}
}
