package main

import (
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// bulkPattern is byte i of what bulkWrite sends: 251 is prime, so that a
// segment's bytes say where in the stream they are.
func bulkPattern(i int) byte { return byte(i % 251) }

// bulkCommand is a shell command that connects to addr and writes size
// bytes of bulkPattern in one write, retrying the connection for at most
// 5 seconds while the server starts.
func bulkCommand(addr string, size int) string {
	return fmt.Sprintf("env SKBTRACE_BULK=%s,%d %s", addr, size, os.Args[0])
}

func bulkWrite(spec string) error {
	addr, n, _ := strings.Cut(spec, ",")
	size, _ := strconv.Atoi(n)
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			if time.Now().After(deadline) {
				return err
			}
			time.Sleep(20 * time.Millisecond)
			continue
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		buf := make([]byte, size)
		for i := range buf {
			buf[i] = bulkPattern(i)
		}
		_, err = c.Write(buf)
		return err
	}
}

// TestWriteFragments sends 256 KiB over TCP between namespaces: at xmit
// the veth gets GSO skbs whose payload is in pages (skb->data_len > 0).
// -w at --snaplen 0 must write each whole, fragments included, and at the
// default snap length the first 256 bytes, reaching into the fragments
// past the linear headers: tshark reads them back, and every segment's
// payload is the bytes sent at its sequence number.
func TestWriteFragments(t *testing.T) {
	ns1, ns2, _ := vethPair(t, 13)
	for _, snap := range []string{"0", ""} {
		checkBulk(t, ns1, ns2, "10.200.13.2:4800", snap, "tcp dst port 4800", false)
	}
}

// checkBulk sends 256 KiB from ns1 to addr in ns2, traces its segments at
// xmit with the filter and -w (at snap, "" for the default), and reads
// the file back with tshark: some skbs were paged, every frame has its
// length and the bytes captured the snap length says, with the VLAN tag
// where tagged says, and every segment's payload is the bytes sent at its
// sequence number.
func checkBulk(t *testing.T, ns1, ns2, addr, snap, filter string, tagged bool) {
	t.Helper()
	const size = 256 << 10
	send := fmt.Sprintf("sh -c 'ip netns exec %s %s & ip netns exec %s %s; wait'", ns2, sinkCommand(addr), ns1, bulkCommand(addr, size))
	lenRE := regexp.MustCompile(`^@paged\[(true|false)\]: (\d+)$`)
	file := filepath.Join(t.TempDir(), "bulk.pcapng")
	args := []string{"-e", `tracepoint:net:net_dev_start_xmit /pcap("` + filter + `")/ { capture(); @paged[skb->data_len > 0] = count() }`, "-w", file, "-c", send}
	if snap != "" {
		args = append(args, "--snaplen", snap)
	}
	code, out, errs := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("--snaplen %q: exit %d: %s", snap, code, errs)
	}
	paged := 0
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if m := lenRE.FindStringSubmatch(l); m != nil && m[1] == "true" {
			paged, _ = strconv.Atoi(m[2])
		}
	}
	if paged == 0 {
		t.Fatalf("--snaplen %q: no paged skb at xmit:\n%s", snap, out)
	}
	link, vlan := 14, ""
	if tagged {
		link, vlan = 18, "10"
	}
	rows := tsharkFields(t, file, nil, "frame.len", "frame.cap_len", "ip.len", "tcp.seq", "tcp.len", "tcp.payload", "frame.comment", "vlan.id")
	big, bytes := 0, 0
	for _, r := range rows {
		flen, _ := strconv.Atoi(r[0])
		caplen, _ := strconv.Atoi(r[1])
		iplen, _ := strconv.Atoi(r[2])
		seq, _ := strconv.Atoi(r[3])
		tcplen, _ := strconv.Atoi(r[4])
		want := flen
		if snap == "" {
			want = min(flen, 256)
		}
		if flen != link+iplen || caplen != want || r[7] != vlan {
			t.Errorf("--snaplen %q: frame of %d bytes, %d captured, IP length %d, VLAN %q: %s", snap, flen, caplen, iplen, r[7], r[6])
			continue
		}
		if tcplen == 0 {
			continue
		}
		if flen > 1514 {
			big++
		}
		payload, err := hex.DecodeString(r[5])
		if err != nil {
			t.Fatalf("payload %q: %v", r[5], err)
		}
		if snap == "0" && len(payload) != tcplen {
			t.Errorf("--snaplen 0: segment at %d has %d of its %d bytes", seq, len(payload), tcplen)
		}
		for i, b := range payload {
			if b != bulkPattern(seq-1+i) {
				t.Errorf("--snaplen %q: segment at %d (%d bytes, %d captured): byte %d is %#x, sent %#x", snap, seq, tcplen, len(payload), i, b, bulkPattern(seq-1+i))
				break
			}
		}
		bytes += len(payload)
	}
	t.Logf("--snaplen %q: %d frames, %d of them GSO, %d payload bytes, %d paged skbs", snap, len(rows), big, bytes, paged)
	if big == 0 || (snap == "0" && bytes < size/2) {
		t.Errorf("--snaplen %q: %d GSO frames, %d payload bytes", snap, big, bytes)
	}
}
