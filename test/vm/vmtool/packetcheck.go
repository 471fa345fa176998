package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
)

// packetBlock is what packetcheck reads of a --timeline -f json block.
type packetBlock struct {
	Type   string `json:"type"`
	Packet string `json:"packet"`
	Skb    string `json:"skb"`
	Hops   []struct {
		Func string         `json:"func"`
		Skb  string         `json:"skb"`
		Data map[string]any `json:"data"`
		Edge *struct {
			Kind   string `json:"kind"`
			Index  int    `json:"index"`
			Count  int    `json:"count"`
			Parent string `json:"parent"`
			Tunnel string `json:"tunnel"`
			VNI    int    `json:"vni"`
			Port   int    `json:"port"`
			Proto  *int   `json:"proto"`
		} `json:"edge"`
	} `json:"hops"`
}

// packetCheck reads skbtrace --timeline -f json's blocks from FILE and
// checks the relations of the logical packets in them, printing a line
// per split and merge it finds: every split (a parent cut into segments,
// or fragments) in the block of its parent, its indexes each once, a
// segment's 1 to n of the same n, a fragment chain's from 1 or 2 up with
// no gap; a merge's head one of the block's skbs; a reassembled
// datagram in the block of its fragments. -segments, -fragments,
// -merges and -reassembled are the least of each that must be there;
// -encap the tunnels some skb must say it was put in (a UDP tunnel with
// its VNI, "vxlan 42"; an IP tunnel by its name, "gre"), -devs the
// devices one packet's block (with -each, every packet's) has hops on.
// It returns the exit status.
func packetCheck(args []string) int {
	fs := flag.NewFlagSet("packetcheck", flag.ExitOnError)
	minSeg := fs.Int("segments", 0, "least segments in all")
	minFrag := fs.Int("fragments", 0, "least fragments in all (the first, the datagram's own skb on the fast path, not counted)")
	minMerge := fs.Int("merges", 0, "least GRO merges in all")
	minReasm := fs.Int("reassembled", 0, "least reassembled datagrams")
	blocks := fs.Int("blocks", 0, "exactly this many blocks with a split (0: any)")
	packets := fs.Int("packets", 0, "exactly this many packets' blocks (0: any)")
	devs := fs.String("devs", "", "devices (comma-separated) that one packet's block must each have a hop on: overlay and underlay")
	encap := fs.String("encap", "", "tunnels (comma-separated: 'vxlan 42,gre') that some packet's skb must each say it was encapsulated in")
	each := fs.Bool("each", false, "every packet's block, not only one, must have hops on each of -devs")
	fs.Parse(args)
	if fs.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: vmtool packetcheck [-segments N] [-fragments N] [-merges N] [-reassembled N] [-blocks N] [-packets N] [-devs A,B [-each]] [-encap 'vxlan 42,gre'] FILE")
		return 2
	}
	f, err := os.Open(fs.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "vmtool packetcheck:", err)
		return 1
	}
	defer f.Close()
	bad := func(format string, a ...any) {
		fmt.Printf("packetcheck: "+format+"\n", a...)
		err = fmt.Errorf("relations broken")
	}
	var segs, frags, merges, reasm, split, npkt int
	crossed := *devs == ""
	encapped := map[string]bool{}
	if *encap != "" {
		for _, t := range strings.Split(*encap, ",") {
			encapped[t] = false
		}
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var b packetBlock
		if json.Unmarshal(sc.Bytes(), &b) != nil || b.Type != "timeline" || b.Packet == "" {
			continue
		}
		npkt++
		skbs, on := map[string]bool{}, map[string]bool{}
		for _, h := range b.Hops {
			skbs[h.Skb] = true
			if d, ok := h.Data["dev"].(string); ok {
				on[d] = true
			}
		}
		if *devs != "" {
			all := true
			for _, d := range strings.Split(*devs, ",") {
				all = all && on[d]
			}
			if all {
				crossed = true
				fmt.Printf("packet %s: hops on %s\n", b.Packet, *devs)
			} else if *each {
				bad("packet %s: not a hop on each of %s", b.Packet, *devs)
			}
		}
		type key struct{ parent, kind string }
		idx := map[key][]int{}
		counts := map[key]map[int]bool{}
		for _, h := range b.Hops {
			e := h.Edge
			if e == nil {
				continue
			}
			switch e.Kind {
			case "segment", "fragment":
				k := key{e.Parent, e.Kind}
				idx[k] = append(idx[k], e.Index)
				if counts[k] == nil {
					counts[k] = map[int]bool{}
				}
				counts[k][e.Count] = true
				if !skbs[e.Parent] {
					bad("packet %s: %s %d's parent %s has no hop in its block", b.Packet, e.Kind, e.Index, e.Parent)
				}
			case "merged":
				merges++
				if !skbs[e.Parent] {
					bad("packet %s: %s merged into %s, not one of its skbs", b.Packet, h.Skb, e.Parent)
				}
				fmt.Printf("packet %s: %s merged into %s\n", b.Packet, h.Skb, e.Parent)
			case "reassembled":
				reasm++
				fmt.Printf("packet %s: reassembled as %s\n", b.Packet, h.Skb)
			case "encap":
				// A UDP tunnel by its port's name and VNI, an IP tunnel
				// (proto, no port) by its name.
				in := fmt.Sprintf("%s %d", e.Tunnel, e.VNI)
				if e.Port == 0 && e.Proto != nil {
					in = e.Tunnel
				}
				fmt.Printf("packet %s: %s encapsulated in %s\n", b.Packet, h.Skb, in)
				if _, ok := encapped[in]; ok {
					encapped[in] = true
				}
			}
		}
		if len(idx) > 0 {
			split++
		}
		for k, is := range idx {
			sort.Ints(is)
			first := 1
			if k.kind == "fragment" && is[0] == 2 {
				first = 2 // the fast path: the datagram's skb is fragment 1
			}
			for i, v := range is {
				if v != first+i {
					bad("packet %s: %ss of %s are %v, not %d to %d each once", b.Packet, k.kind, k.parent, is, first, first+len(is)-1)
					break
				}
			}
			if k.kind == "segment" {
				segs += len(is)
				n := 0
				for c := range counts[k] {
					n = c
				}
				if len(counts[k]) != 1 || n != len(is) {
					bad("packet %s: %d segments of %s, counts %v", b.Packet, len(is), k.parent, counts[k])
				}
			} else {
				frags += len(is)
			}
			fmt.Printf("packet %s: %s cut into %ss %d to %d\n", b.Packet, k.parent, k.kind, first, first+len(is)-1)
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "vmtool packetcheck:", err)
		return 1
	}
	for _, c := range []struct {
		what      string
		got, want int
	}{{"segments", segs, *minSeg}, {"fragments", frags, *minFrag}, {"merges", merges, *minMerge}, {"reassembled datagrams", reasm, *minReasm}} {
		if c.got < c.want {
			bad("%d %s; want %d or more", c.got, c.what, c.want)
		}
	}
	for _, t := range strings.Split(*encap, ",") {
		if t != "" && !encapped[t] {
			bad("no skb encapsulated in %s", t)
		}
	}
	if !crossed {
		bad("no packet's block has hops on each of %s", *devs)
	}
	if *packets > 0 && npkt != *packets {
		bad("%d packets' blocks; want %d", npkt, *packets)
	}
	if *blocks > 0 && split != *blocks {
		bad("%d blocks with splits; want %d", split, *blocks)
	}
	fmt.Printf("packetcheck: %d segments, %d fragments, %d merges, %d reassembled, in %d blocks with splits\n", segs, frags, merges, reasm, split)
	if err != nil {
		return 1
	}
	return 0
}
