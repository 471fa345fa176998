package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestRotateBadFlags: a bad -C, -G or -W value, or rotation with nothing
// to rotate, is one line naming the flag, and exit status 1.
func TestRotateBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-C", "0", "-w", "x"}, `-C takes a size above 0: millions of bytes as tcpdump's (-C 10), or KiB, MiB, GiB (-C 100k, -C 10m, -C 1g), not "0"`},
		{[]string{"-C", "1.5", "-w", "x"}, `-C takes a size above 0`},
		{[]string{"-C", "10q", "-o", "x"}, `-C takes a size above 0`},
		{[]string{"--rotate-size", "", "-o", "x"}, `-C takes a size above 0`},
		{[]string{"-G", "0", "-w", "x"}, `-G takes a whole number of seconds above 0, not 0`},
		{[]string{"-G", "1s", "-w", "x"}, `invalid argument "1s" for "-G, --rotate-seconds" flag`},
		{[]string{"-W", "3", "-w", "x"}, `-W 3 keeps a ring of files made by -C or -G: give one of them`},
		{[]string{"-W", "0", "-C", "1", "-w", "x"}, `-W takes a number of files above 0, not 0`},
		{[]string{"-C", "1"}, `-C and -G rotate the files of -w FILE or -o FILE: give one`},
		{[]string{"-G", "5", "-w", "-"}, `-C and -G rotate files: -w - writes to stdout`},
	} {
		code, out, errs := runCLI(t, append(c.args, "-e", "BEGIN { exit() }")...)
		if code != 1 || out != "" || !strings.HasPrefix(errs, "skbtrace: ") || !strings.Contains(errs, c.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 1 and %q", c.args, code, out, errs, c.want)
		}
	}
	for _, c := range []struct {
		size string
		want int64
	}{{"10", 10_000_000}, {"100k", 100 << 10}, {"3M", 3 << 20}, {"1g", 1 << 30}, {"2MiB", 2 << 20}, {"64kB", 64 << 10}, {"512b", 512}} {
		if got, err := parseRotateSize(c.size); got != c.want || err != nil {
			t.Errorf("-C %s: %d (%v), want %d", c.size, got, err, c.want)
		}
	}
}

// rotateScript captures and prints each datagram to port once, where it
// leaves the sending namespace, and counts them.
func rotateScript(port int) string {
	return fmt.Sprintf(`tracepoint:net:net_dev_queue /pcap("udp dst port %d")/ { capture(); print(len); @n = count() }`, port)
}

// rotateRun runs skbtrace on rotateScript while cmd sends, and returns its
// stderr and the events it reported lost.
func rotateRun(t *testing.T, cmd string, port int, args ...string) (errs string, lost int) {
	t.Helper()
	code, _, errs := runCLI(t, append(args, "-f", "json", "-e", rotateScript(port), "-c", cmd)...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errs)
	}
	if m := regexp.MustCompile(`(\d+) events lost`).FindStringSubmatch(errs); m != nil {
		lost, _ = strconv.Atoi(m[1])
	}
	return errs, lost
}

// filesSaid are the files skbtrace says flag wrote on stderr, and how many
// it says were removed.
func filesSaid(t *testing.T, errs, flag string) (files []string, removed int) {
	t.Helper()
	m := regexp.MustCompile(`(?m)^skbtrace: ` + flag + ` wrote (\d+) files?(?: \((\d+) older files? removed or overwritten by -W \d+\))?: (.*)$`).FindStringSubmatch(errs)
	if m == nil {
		t.Fatalf("no %s files line on stderr:\n%s", flag, errs)
	}
	files = strings.Fields(m[3])
	if n, _ := strconv.Atoi(m[1]); n != len(files) {
		t.Errorf("%s: says %s files, names %d", flag, m[1], len(files))
	}
	removed, _ = strconv.Atoi(m[2])
	return files, removed
}

// pcapFrames reads each file alone with tshark and tcpdump and returns its
// frames to port; both must read it, and agree.
func pcapFrames(t *testing.T, files []string, port int) []int {
	t.Helper()
	var n []int
	for _, f := range files {
		rows := tsharkFields(t, f, nil, "udp.dstport", "frame.interface_name")
		for _, r := range rows {
			if r[0] != strconv.Itoa(port) || r[1] != "v1" {
				t.Errorf("%s: frame %v", f, r)
			}
		}
		out, err := exec.Command("tcpdump", "-r", f, "-nn").Output()
		if c := strings.Count(string(out), "\n"); err != nil || c != len(rows) {
			t.Errorf("%s: tcpdump -r read %d frames (%v), tshark %d", f, c, err, len(rows))
		}
		n = append(n, len(rows))
	}
	return n
}

// jsonRecords reads -o's files: every line of each a JSON object; it
// returns the events in each file, and the last file's "files" and map
// records.
func jsonRecords(t *testing.T, files []string) (events []int, said []string, count float64) {
	t.Helper()
	for i, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			var rec struct {
				Type string
				Data json.RawMessage
			}
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				t.Fatalf("%s: line %q: %v", f, sc.Text(), err)
			}
			switch rec.Type {
			case "event":
				n++
			case "files", "map":
				if i != len(files)-1 {
					t.Errorf("%s: a %s record before the last file", f, rec.Type)
				}
				var d struct {
					Flag  string
					Files []string
					N     float64 `json:"@n"`
				}
				json.Unmarshal(rec.Data, &d)
				if d.Flag == "-o" {
					said = d.Files
				}
				count += d.N
			}
		}
		fh.Close()
		events = append(events, n)
	}
	return events, said, count
}

func sum(n []int) int {
	s := 0
	for _, x := range n {
		s += x
	}
	return s
}

// TestRotateFlood floods datagrams from a namespace of the test's own and
// writes each as a pcapng frame (-w) and a JSON event (-o), both rotated
// by -C. Without -W, every file reads alone (tshark, tcpdump), and the
// frames and events over the files are the datagrams sent, less those
// skbtrace reported lost: none lost or split. With -W 3 the ring keeps
// three files of each; every full pcapng file holds the same frames (the
// frames are alike), so those kept plus those in the files rotated out
// are again what was sent. The files are named on stderr and in a JSON
// "files" record; the map printed at exit is whole, in the last file.
func TestRotateFlood(t *testing.T) {
	ns1, _, _ := vethPair(t, 74)
	const sent, port = 3000, 4774
	send := "ip netns exec " + ns1 + " " + sendCommand(fmt.Sprintf("10.200.74.2:%d", port), sent, 100, 0)

	dir := t.TempDir()
	pcap, js := filepath.Join(dir, "all.pcapng"), filepath.Join(dir, "all.json")
	errs, lost := rotateRun(t, send, port, "-C", "64k", "-w", pcap, "-o", js)
	pfiles, removed := filesSaid(t, errs, "-w")
	onDisk, _ := filepath.Glob(pcap + "*")
	if removed != 0 || len(pfiles) < 5 || !slices.Equal(slices.Sorted(slices.Values(pfiles)), onDisk) {
		t.Fatalf("-w wrote %v (%d removed), on disk %v", pfiles, removed, onDisk)
	}
	if pfiles[0] != pcap || pfiles[1] != pcap+"1" {
		t.Errorf("files named %v, want %s, %s1, ... as tcpdump names them", pfiles, pcap, pcap)
	}
	frames := pcapFrames(t, pfiles, port)
	if sum(frames)+lost != sent {
		t.Errorf("-C 64k: %d frames in %d files, %d lost, sent %d", sum(frames), len(pfiles), lost, sent)
	}
	ofiles, _ := filesSaid(t, errs, "-o")
	events, said, count := jsonRecords(t, ofiles)
	if sum(events)+lost != sent || int(count)+lost != sent || !slices.Equal(said, ofiles) || len(ofiles) < 5 {
		t.Errorf("-o -C 64k: %d events in %d files, @n %v, %d lost, sent %d; files record %v, stderr %v", sum(events), len(ofiles), count, lost, sent, said, ofiles)
	}
	t.Logf("-C 64k: %d pcapng files %v, %d json files %v, %d lost", len(pfiles), frames, len(ofiles), events, lost)

	dir = t.TempDir()
	pcap, js = filepath.Join(dir, "ring.pcapng"), filepath.Join(dir, "ring.json")
	errs, lost = rotateRun(t, send, port, "-C", "64k", "-W", "3", "-w", pcap, "-o", js)
	pfiles, removed = filesSaid(t, errs, "-w")
	onDisk, _ = filepath.Glob(pcap + "*")
	want := []string{pcap + "0", pcap + "1", pcap + "2"}
	if removed < 3 || !slices.Equal(onDisk, want) || !slices.Equal(slices.Sorted(slices.Values(pfiles)), want) {
		t.Fatalf("-W 3: -w wrote %v (%d removed), on disk %v, want %v", pfiles, removed, onDisk, want)
	}
	frames = pcapFrames(t, pfiles, port)
	full := frames[0]
	if frames[1] != full || frames[2] > full || frames[2] == 0 {
		t.Errorf("-W 3: frames per file %v: full files differ", frames)
	}
	if kept := sum(frames); kept+removed*full+lost != sent {
		t.Errorf("-W 3: %d frames kept, %d files of %d rotated out, %d lost: sent %d", kept, removed, full, lost, sent)
	}
	ofiles, _ = filesSaid(t, errs, "-o")
	onDisk, _ = filepath.Glob(js + "*")
	events, said, count = jsonRecords(t, ofiles)
	if len(ofiles) != 3 || len(onDisk) != 3 || !slices.Equal(said, ofiles) || int(count)+lost != sent {
		t.Errorf("-o -W 3: files %v, on disk %v, files record %v, @n %v", ofiles, onDisk, said, count)
	}
	t.Logf("-C 64k -W 3: pcapng %v, %d rotated out of %d frames; json %v; %d lost", frames, removed, full, events, lost)
}

// TestRotateSeconds sends four bursts 0.7 s apart under -G 1 with strftime
// conversions in -w's name: several files, each named by its time, each
// reading alone, none empty, the frames over them all that were sent.
func TestRotateSeconds(t *testing.T) {
	ns1, _, _ := vethPair(t, 75)
	const burst, port = 50, 4775
	one := "ip netns exec " + ns1 + " " + sendCommand(fmt.Sprintf("10.200.75.2:%d", port), burst, 100, 0)
	send := fmt.Sprintf("for i in 1 2 3 4; do %s; sleep 0.7; done", one)
	dir := t.TempDir()
	errs, lost := rotateRun(t, send, port, "-G", "1", "-w", filepath.Join(dir, "g-%H%M%S.pcapng"))
	files, _ := filesSaid(t, errs, "-w")
	onDisk, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(files) < 2 || !slices.Equal(slices.Sorted(slices.Values(files)), onDisk) {
		t.Fatalf("-G 1: wrote %v, on disk %v", files, onDisk)
	}
	name := regexp.MustCompile(`/g-\d{6}\.pcapng$`)
	for _, f := range files {
		if !name.MatchString(f) {
			t.Errorf("-G 1: file %s not named by its time", f)
		}
	}
	frames := pcapFrames(t, files, port)
	if sum(frames)+lost != 4*burst || slices.Contains(frames, 0) {
		t.Errorf("-G 1: frames %v, %d lost, sent %d", frames, lost, 4*burst)
	}
	t.Logf("-G 1: %d files %v", len(files), frames)
}

// TestRotateTimeline rotates --timeline's text by -C 2k: a block is
// rotated whole, so every file is blocks from their header to their last
// hop, and each datagram's block, from where it was sent to its drop, is
// in one file, once.
func TestRotateTimeline(t *testing.T) {
	ns1, _, _ := vethPair(t, 76)
	const sent, port = 30, 4776
	base := filepath.Join(t.TempDir(), "tl.txt")
	code, _, errs := runCLI(t, "--timeline", "--filter", fmt.Sprintf("udp port %d", port), "-o", base, "-C", "2k",
		"-c", "ip netns exec "+ns1+" "+sendCommand(fmt.Sprintf("10.200.76.2:%d", port), sent, 10, 0))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	files, _ := filesSaid(t, errs, "-o")
	header := regexp.MustCompile(`^skb 0x[0-9a-f]+ at \d\d:\d\d:\d\d\.\d{6}`)
	hop := regexp.MustCompile(`^  \+ *\d+\.\d{3}us  \S+`)
	drop := regexp.MustCompile(`kfree_skb +reason=NO_SOCKET `)
	datagrams := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, block := range strings.Split(strings.TrimSpace(string(b)), "\n\n") {
			lines := strings.Split(block, "\n")
			if !header.MatchString(lines[0]) {
				t.Errorf("%s: a block starts with %q", f, lines[0])
			}
			for _, l := range lines[1:] {
				if !hop.MatchString(l) {
					t.Errorf("%s: not a hop: %q", f, l)
				}
			}
			if strings.Contains(block, "net_dev_queue") {
				datagrams++
				if !drop.MatchString(lines[len(lines)-1]) {
					t.Errorf("%s: a datagram's block does not end at its drop:\n%s", f, block)
				}
			}
		}
	}
	if datagrams+rotateLost(errs) != sent || len(files) < 3 {
		t.Errorf("%d datagrams' blocks in %d files, sent %d", datagrams, len(files), sent)
	}
	t.Logf("--timeline -C 2k: %d blocks of datagrams in %d files", datagrams, len(files))
}

// rotateLost is the events skbtrace said it lost.
func rotateLost(errs string) int {
	m := regexp.MustCompile(`(\d+) events lost`).FindStringSubmatch(errs)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}
