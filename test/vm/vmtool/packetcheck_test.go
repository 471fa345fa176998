package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPacketCheck: packetcheck passes a block whose segments are 1 to n
// once each, with a merge into one of its skbs, and fails a gap, a
// parent outside the block and too few segments; -encap wants each of
// its tunnels, -each the devices in every packet's block.
func TestPacketCheck(t *testing.T) {
	hop := func(skb, edge string) string {
		return `{"data":{"dev":"d` + skb + `"},"func":"f","skb":"` + skb + `"` + edge + `}`
	}
	seg := func(i string) string {
		return `,"edge":{"count":3,"index":` + i + `,"kind":"segment","parent":"0xa"}`
	}
	block := func(hops ...string) string {
		s := `{"hops":[`
		for i, h := range hops {
			if i > 0 {
				s += ","
			}
			s += h
		}
		return s + `],"packet":"0x1000000000001","skb":"0xa","type":"timeline"}` + "\n"
	}
	good := block(hop("0xa", ""), hop("0xb", seg("1")), hop("0xc", seg("2")), hop("0xd", seg("3")),
		hop("0xc", `,"edge":{"kind":"merged","parent":"0xb"}`))
	for _, tc := range []struct {
		name, text string
		args       []string
		rc         int
	}{
		{"good", good, []string{"-segments", "3", "-merges", "1", "-blocks", "1", "-packets", "1", "-devs", "d0xa,d0xc"}, 0},
		{"not crossed", good, []string{"-devs", "d0xa,d0xe"}, 1},
		{"two packets", good + good, []string{"-packets", "1"}, 1},
		{"gap", block(hop("0xa", ""), hop("0xb", seg("1")), hop("0xd", seg("3"))), nil, 1},
		{"stranger", block(hop("0xb", seg("1")), hop("0xc", seg("2")), hop("0xd", seg("3"))), nil, 1},
		{"too few", good, []string{"-segments", "4"}, 1},
		{"no merge", block(hop("0xa", "")), []string{"-merges", "1"}, 1},
		{"encap", block(hop("0xa", ""), hop("0xa", `,"edge":{"kind":"encap","port":4789,"tunnel":"vxlan","vni":42}`)), []string{"-encap", "vxlan 42"}, 0},
		{"other vni", block(hop("0xa", ""), hop("0xa", `,"edge":{"kind":"encap","port":4789,"tunnel":"vxlan","vni":43}`)), []string{"-encap", "vxlan 42"}, 1},
		{"no encap", good, []string{"-encap", "vxlan 42"}, 1},
		{"gre and vxlan", block(hop("0xa", `,"edge":{"kind":"encap","proto":47,"tunnel":"gre"}`)) + block(hop("0xb", `,"edge":{"kind":"encap","port":4789,"tunnel":"vxlan","vni":44}`)),
			[]string{"-encap", "gre,vxlan 44", "-packets", "2"}, 0},
		{"no ipip", block(hop("0xa", `,"edge":{"kind":"encap","proto":47,"tunnel":"gre"}`)), []string{"-encap", "gre,ipip"}, 1},
		{"each crossed", good + good, []string{"-devs", "d0xa,d0xc", "-each"}, 0},
		{"each not crossed", good + block(hop("0xa", "")), []string{"-devs", "d0xa,d0xc", "-each"}, 1},
	} {
		file := filepath.Join(t.TempDir(), "t.json")
		if err := os.WriteFile(file, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		if rc := packetCheck(append(tc.args, file)); rc != tc.rc {
			t.Errorf("%s: exit %d, want %d", tc.name, rc, tc.rc)
		}
	}
}
