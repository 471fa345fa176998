package pcaptest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// TcpdumpSelects runs `tcpdump -r file -w - filter` and returns the
// indexes of the frames it writes (frame i has the timestamp
// 1700000000+i, as WritePcap writes them).
func TcpdumpSelects(file, filter string) ([]int, error) {
	cmd := exec.Command("tcpdump", "-r", file, "-w", "-", filter)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("tcpdump %q: %v: %s", filter, err, stderr.String())
	}
	if _, err := ReadPcap(out); err != nil {
		return nil, fmt.Errorf("tcpdump %q: %v", filter, err)
	}
	// The records' times: ReadPcap checked their lengths.
	sel := []int{}
	for b := out[24:]; len(b) > 0; b = b[16+int(binary.LittleEndian.Uint32(b[8:])):] {
		sel = append(sel, int(binary.LittleEndian.Uint32(b))-1_700_000_000)
	}
	return sel, nil
}

// Selects returns the indexes of the frames of Frames that filter selects
// as tcpdump does: `tcpdump -r` on a file of them in dir. Bookworm's
// libpcap (1.10) has no vxlan, which libpcap 1.11 compiles exactly as
// geneve (gencode.c) but for the port (4789), the header's check (flags
// exactly I, where Geneve's is version 0) and the payload (always
// Ethernet, where Geneve says so with its protocol type): a filter with
// vxlan selects what its Geneve twin (vxlan replaced) selects from
// GeneveForVXLAN's frames.
func Selects(dir, filter string) ([]int, error) {
	name, frames := "frames.pcap", Frames
	if strings.Contains(filter, "vxlan") {
		name, frames = "frames-vxlan-as-geneve.pcap", func() [][]byte { return GeneveForVXLAN(Frames()) }
		filter = strings.ReplaceAll(filter, "vxlan", "geneve")
	}
	file := filepath.Join(dir, name)
	if _, err := os.Stat(file); err != nil {
		f, err := os.Create(file)
		if err != nil {
			return nil, err
		}
		err = WritePcap(f, frames())
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
	}
	return TcpdumpSelects(file, filter)
}
