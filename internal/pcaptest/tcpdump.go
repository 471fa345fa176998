package pcaptest

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// TcpdumpSelects runs `tcpdump -r file filter` and returns the indexes of
// the frames it prints (frame i has the timestamp 1700000000+i, as
// WritePcap writes them).
func TcpdumpSelects(file, filter string) ([]int, error) {
	cmd := exec.Command("tcpdump", "-r", file, "-nn", "-tt", filter)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("tcpdump %q: %v: %s", filter, err, stderr.String())
	}
	sel := []int{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		ts, _, _ := strings.Cut(sc.Text(), ".")
		sec, err := strconv.Atoi(ts)
		if err != nil {
			return nil, fmt.Errorf("tcpdump %q: unexpected line %q", filter, sc.Text())
		}
		sel = append(sel, sec-1_700_000_000)
	}
	return sel, nil
}
