package output

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/lang/types"
	"github.com/skbtrace/skbtrace/runtime/names"
)

// namesBenchScripts print a packet's device, network namespace and source
// address (each a value that names annotate), and the pod builtins.
var namesBenchScripts = []struct{ name, text string }{
	{"print", `tracepoint:skb:kfree_skb { print(len, dev, netns, saddr, sport, dport) }`},
	{"pod", `tracepoint:skb:kfree_skb { print(len, dev, netns, pod, podns, container) }`},
}

// benchNetns is the namespace inode the records carry; benchDev and
// benchAddr the device and source address the fake knows.
const (
	benchNetns = 4026532177
	benchDev   = "veth3058d24e"
)

var benchAddr = netip.AddrFrom4([4]byte{10, 244, 0, 5})

// fakeNames knows one pod: its namespace, its host-side veth and its
// address; every lookup is a map read of a Name built beforehand.
type fakeNames struct {
	netns map[uint64]Name
	dev   map[string]Name
	addr  map[netip.Addr]Name
}

func newFakeNames(inode uint64) *fakeNames {
	n := Name{Namespace: "default", Pod: "web-0", Container: "web", Label: "default/web-0"}
	return &fakeNames{
		netns: map[uint64]Name{inode: n},
		dev:   map[string]Name{benchDev: n},
		addr:  map[netip.Addr]Name{benchAddr: n},
	}
}

func (f *fakeNames) Netns(inode uint64) (Name, bool) { n, ok := f.netns[inode]; return n, ok }
func (f *fakeNames) Pid(uint32) (Name, bool)         { return Name{}, false }
func (f *fakeNames) Dev(d string) (Name, bool)       { n, ok := f.dev[d]; return n, ok }
func (f *fakeNames) Addr(a netip.Addr) (Name, bool)  { n, ok := f.addr[a]; return n, ok }

// benchIPNetns adds an `ip netns` for the benchmark and returns a resolver
// that has refreshed with it (the host's /proc as it is), and its inode;
// "" where that cannot be done (not root, no ip).
func benchIPNetns(b *testing.B) (*names.Resolver, uint64, string) {
	if os.Geteuid() != 0 {
		return nil, 0, "not root"
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return nil, 0, "no ip"
	}
	name := fmt.Sprintf("skbnb-%d", os.Getpid())
	exec.Command("ip", "netns", "del", name).Run()
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		return nil, 0, fmt.Sprintf("ip netns add: %v %s", err, out)
	}
	b.Cleanup(func() { exec.Command("ip", "netns", "del", name).Run() })
	var st unix.Stat_t
	if err := unix.Stat("/run/netns/"+name, &st); err != nil {
		return nil, 0, err.Error()
	}
	r := names.New(names.Options{})
	b.Cleanup(r.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.Refresh(ctx); err != nil {
		return nil, 0, err.Error()
	}
	if id, ok := r.Netns(st.Ino); !ok || id.Label() == "" {
		return nil, 0, "the resolver does not name " + name
	}
	return r, st.Ino, ""
}

// namesRecords are records of ev whose namespace (and pod builtins) is
// inode, device benchDev and source address benchAddr, other values
// varying as sampleRecord makes them.
func namesRecords(ev *codegen.Event, inode uint64) [][]byte {
	var recs [][]byte
	for seed := range 64 {
		b := sampleRecord(ev, seed%3)
		for _, a := range ev.Args {
			raw := b[a.Offset : a.Offset+a.Size]
			switch {
			case a.Type.Kind == types.Int && (a.Type.Fmt == types.FmtNetns || a.Type.Fmt.Named()):
				binary.LittleEndian.PutUint64(raw, inode)
			case a.Type.Kind == types.String && a.Type.Fmt == types.FmtDev:
				clear(raw)
				copy(raw, benchDev)
			case a.Type.Kind == types.Addr && a.Name == "saddr":
				clear(raw)
				copy(raw, benchAddr.AsSlice())
				raw[16] = 4
			}
		}
		recs = append(recs, b)
	}
	return recs
}

// BenchmarkPrinterNames is the cost of names per printed event: a print
// record of a namespace, a device and an address formatted as text and
// JSON with no names (IDs alone), with a fake that knows the namespace,
// veth and address (a map read each), and with a real names.Resolver
// refreshed from this host with an ip netns of the records (as root).
func BenchmarkPrinterNames(b *testing.B) {
	r, rino, why := benchIPNetns(b)
	for _, s := range namesBenchScripts {
		ev := compilePrinter(b, s.text)[0]
		for _, kind := range []string{"none", "fake", "resolver"} {
			inode := uint64(benchNetns)
			var n Names
			switch kind {
			case "fake":
				n = newFakeNames(inode)
			case "resolver":
				if r != nil {
					inode, n = rino, ResolverNames(r)
				}
			}
			recs := namesRecords(ev, inode)
			for _, format := range []string{"text", "json"} {
				b.Run(s.name+"/"+kind+"/"+format, func(b *testing.B) {
					if kind == "resolver" && r == nil {
						b.Skip("no real resolver: " + why)
					}
					// The names are printed (a check, outside the timing).
					var out bytes.Buffer
					p := testPrinterFormat(&out, []*codegen.Event{ev}, format)
					p.fmt.SetNames(n)
					if err := p.record(recs[0]); err != nil {
						b.Fatal(err)
					}
					p.flush()
					if want := nameIn(kind, format, r, inode); !bytes.Contains(out.Bytes(), []byte(want)) {
						b.Fatalf("%s names no %q: %s", kind, want, out.Bytes())
					}
					p = testPrinterFormat(io.Discard, []*codegen.Event{ev}, format)
					p.fmt.SetNames(n)
					benchRecords(b, p, recs)
				})
			}
		}
	}
}

// nameIn is what a record's output must hold: the namespace's label, or
// its inode where there are no names. JSON names only pods and
// containers (an ip netns adds no field), and prints the pod builtins.
func nameIn(kind, format string, r *names.Resolver, inode uint64) string {
	switch {
	case kind == "fake":
		return "web-0"
	case kind == "resolver" && format == "json":
		return ""
	case kind == "resolver":
		id, _ := r.Netns(inode)
		return id.NetnsName
	}
	return fmt.Sprint(inode)
}
