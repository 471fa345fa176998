package pcapfilter

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"sync"
)

// service is a named port and the transport protocols it is named for.
type service struct {
	port     uint64
	tcp, udp bool
}

// builtinServices stand in for /etc/services where a system has none.
var builtinServices = map[string]service{
	"ftp": {21, true, false}, "ssh": {22, true, false}, "telnet": {23, true, false},
	"smtp": {25, true, false}, "domain": {53, true, true}, "bootps": {67, false, true},
	"bootpc": {68, false, true}, "tftp": {69, false, true}, "http": {80, true, false},
	"ntp": {123, false, true}, "snmp": {161, true, true}, "https": {443, true, true},
	"syslog": {514, false, true},
}

var services = sync.OnceValue(func() map[string]service {
	f, err := os.Open("/etc/services")
	if err != nil {
		return builtinServices
	}
	defer f.Close()
	m := map[string]service{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		num, proto, ok := strings.Cut(fields[1], "/")
		port, err := strconv.ParseUint(num, 10, 16)
		if !ok || err != nil || (proto != "tcp" && proto != "udp") {
			continue
		}
		for _, name := range append([]string{fields[0]}, fields[2:]...) {
			s := m[name]
			if (s.tcp || s.udp) && s.port != port {
				continue
			}
			s.port = port
			if proto == "tcp" {
				s.tcp = true
			} else {
				s.udp = true
			}
			m[name] = s
		}
	}
	return m
})

// lookupService finds a port by name, as libpcap does with
// getservbyname: a name only TCP (or only UDP) knows restricts the
// primitive to that protocol.
func lookupService(name string) (service, bool) {
	s, ok := services()[name]
	return s, ok
}
