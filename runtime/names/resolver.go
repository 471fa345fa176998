package names

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// nudgeEvery is how often at most a lookup of an unknown ID wakes the
// refresher.
const nudgeEvery = 250 * time.Millisecond

// startTimeout bounds Start's synchronous refresh.
const startTimeout = 2 * time.Second

// Options configure a Resolver.
type Options struct {
	// CRISocket is the CRI endpoint, "unix:///path" or a path; "" tries
	// CONTAINER_RUNTIME_ENDPOINT, then /run/containerd/containerd.sock,
	// /run/crio/crio.sock, /run/k3s/containerd/containerd.sock and their
	// /var/run equivalents.
	CRISocket string
	// Poll is the background refresh period; 0 is 1s.
	Poll time.Duration
	// Proc is the procfs root; "" is /proc.
	Proc string
	// NetnsDir is where `ip netns` keeps its names; "" is /run/netns.
	NetnsDir string
	// PodmanRoot is root podman's storage; "" is /var/lib/containers/storage.
	PodmanRoot string
	// DockerRoot is docker's data root; "" is /var/lib/docker.
	DockerRoot string
	// Warn is told each problem once (no CRI socket, permission denied
	// reading other processes' namespaces, ...); nil is silent.
	Warn func(format string, args ...any)
}

// Resolver answers lookups from its latest snapshot and refreshes it in the
// background. Its methods are safe for concurrent use.
type Resolver struct {
	o    Options
	snap atomic.Pointer[tables]

	kick      chan struct{}
	lastNudge atomic.Int64 // unix nanoseconds of the last nudge

	refreshMu sync.Mutex // one refresh at a time; guards the sources below
	cri       criSource
	proc      procCache
	engines   engineNames
	warned    map[string]bool

	mu       sync.Mutex // guards onChange, status, cancel, done
	onChange []func()
	status   []string
	cancel   context.CancelFunc
	done     chan struct{}
}

// New returns a Resolver that knows nothing until Start or Refresh.
func New(o Options) *Resolver {
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.Proc == "" {
		o.Proc = "/proc"
	}
	if o.NetnsDir == "" {
		o.NetnsDir = "/run/netns"
	}
	if o.PodmanRoot == "" {
		o.PodmanRoot = "/var/lib/containers/storage"
	}
	if o.DockerRoot == "" {
		o.DockerRoot = "/var/lib/docker"
	}
	r := &Resolver{o: o, kick: make(chan struct{}, 1), warned: map[string]bool{}}
	r.cri = criSource{configured: o.CRISocket, proc: o.Proc}
	r.proc = procCache{root: o.Proc}
	r.engines = engineNames{podmanRoot: o.PodmanRoot, dockerRoot: o.DockerRoot}
	r.snap.Store(&tables{})
	return r
}

// Start refreshes once (for at most about 2s) and then in the background
// every Poll, and sooner when a lookup missed, until ctx ends or Close. Its
// error is the first refresh's, where /proc could not be read; the
// refresher runs even then.
func (r *Resolver) Start(ctx context.Context) error {
	r.mu.Lock()
	if r.done != nil {
		r.mu.Unlock()
		return errors.New("names: the resolver is already started")
	}
	ctx, cancel := context.WithCancel(ctx)
	r.cancel, r.done = cancel, make(chan struct{})
	r.mu.Unlock()

	sctx, scancel := context.WithTimeout(ctx, startTimeout)
	err := r.Refresh(sctx)
	scancel()
	go r.loop(ctx)
	return err
}

// loop refreshes every Poll or when nudged, until ctx ends.
func (r *Resolver) loop(ctx context.Context) {
	defer close(r.done)
	t := time.NewTicker(r.o.Poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-r.kick:
		}
		rctx, cancel := context.WithTimeout(ctx, r.o.Poll+startTimeout)
		r.Refresh(rctx)
		cancel()
	}
}

// Close stops the background refresh and drops the CRI connection.
func (r *Resolver) Close() {
	r.mu.Lock()
	cancel, done := r.cancel, r.done
	r.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	r.refreshMu.Lock()
	r.cri.close()
	r.refreshMu.Unlock()
}

// OnChange registers f, called from the refresher after a refresh that
// changed the tables.
func (r *Resolver) OnChange(f func()) {
	r.mu.Lock()
	r.onChange = append(r.onChange, f)
	r.mu.Unlock()
}

// Status returns one line per source: what answered and how many it found,
// or why it could not.
func (r *Resolver) Status() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.status...)
}

// warn says a problem through Options.Warn the first time key is seen.
func (r *Resolver) warn(key, format string, args ...any) {
	if r.warned[key] {
		return
	}
	r.warned[key] = true
	if r.o.Warn != nil {
		r.o.Warn(format, args...)
	}
}

// nudge wakes the refresher, without blocking and at most every nudgeEvery.
func (r *Resolver) nudge() {
	now := time.Now().UnixNano()
	last := r.lastNudge.Load()
	if now-last < int64(nudgeEvery) || !r.lastNudge.CompareAndSwap(last, now) {
		return
	}
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// lookup reads k's identity from a table of the snapshot; a miss nudges
// the refresher.
func lookup[K comparable](r *Resolver, table map[K]Identity, k K) (Identity, bool) {
	id, ok := table[k]
	if !ok {
		r.nudge()
	}
	return id, ok
}

// Netns returns the identity of the network namespace with this inode.
func (r *Resolver) Netns(inode uint64) (Identity, bool) {
	return lookup(r, r.snap.Load().netns, inode)
}

// Cgroup returns the identity of the container in the cgroup v2 with this
// ID, as bpf_get_current_cgroup_id returns it (the inode of the cgroup2
// directory).
func (r *Resolver) Cgroup(id uint64) (Identity, bool) {
	return lookup(r, r.snap.Load().cgroup, id)
}

// Pid returns the identity of the container the process (thread group ID)
// runs in.
func (r *Resolver) Pid(pid uint32) (Identity, bool) {
	return lookup(r, r.snap.Load().pid, pid)
}

// Dev returns the identity of the pod or container behind a host-side
// device (a veth in the resolver's network namespace whose peer is in the
// pod's).
func (r *Resolver) Dev(name string) (Identity, bool) {
	return lookup(r, r.snap.Load().dev, name)
}

// Addr returns the identity of the pod whose IP address a is, from the
// CRI's pod sandbox statuses (its IP and additional IPs); IPv4-mapped IPv6
// addresses are read as IPv4. Host-network pods' addresses are not theirs
// alone and are not named.
func (r *Resolver) Addr(a netip.Addr) (Identity, bool) {
	return lookup(r, r.snap.Load().addr, a.Unmap())
}

// Refresh asks every source now and replaces the tables; OnChange's
// functions run if they changed. A source that cannot answer is a line of
// Status (and a Warn the first time), not an error; the error is /proc's,
// or ctx's.
func (r *Resolver) Refresh(ctx context.Context) error {
	r.refreshMu.Lock()
	t, status, err := r.gather(ctx)
	r.refreshMu.Unlock()
	if t == nil {
		return err
	}
	old := r.snap.Swap(t)
	r.mu.Lock()
	r.status = status
	fns := append([]func(){}, r.onChange...)
	r.mu.Unlock()
	if !old.equal(t) {
		for _, f := range fns {
			f()
		}
	}
	return err
}

// gather runs the sources and builds the tables. refreshMu is held.
func (r *Resolver) gather(ctx context.Context) (*tables, []string, error) {
	var f found
	var status []string
	f.netnsDir = r.o.NetnsDir

	pods, line, err := r.cri.pods(ctx)
	status = append(status, line)
	if err != nil {
		if errors.Is(err, errNoCRISocket) {
			r.warn("cri-none", "names: %s: pods are named from their cgroups only (their UIDs); set the CRI socket if a runtime listens elsewhere", line)
		} else {
			r.warn("cri:"+line, "names: %s", line)
		}
	}
	f.pods, f.criRuntime = pods, r.cri.runtime

	proc, _, err := r.proc.scan()
	if err != nil {
		status = append(status, fmt.Sprintf("%s: %v", r.o.Proc, err))
		r.warn("proc", "names: %s: %v", r.o.Proc, err)
		return nil, status, fmt.Errorf("names: reading %s: %w", r.o.Proc, err)
	}
	f.proc = proc
	nets := map[uint64]bool{}
	cgroups := map[uint64]bool{}
	seenID := map[string]bool{}
	var ids []string
	for _, p := range proc.procs {
		if p.netns != 0 {
			nets[p.netns] = true
		}
		if p.hasCont {
			if p.cgroupID != 0 {
				cgroups[p.cgroupID] = true
			}
			if !seenID[p.cont.ID] {
				seenID[p.cont.ID] = true
				ids = append(ids, p.cont.ID)
			}
		}
	}
	line = fmt.Sprintf("%s: %d processes, %d network namespaces", r.o.Proc, len(proc.procs), len(nets))
	if proc.denied > 0 {
		line += fmt.Sprintf(" (%d processes' namespaces unreadable: permission denied)", proc.denied)
		if !hasPtraceCap(r.o.Proc) {
			r.warn("proc-denied", "names: permission denied reading the network namespace of %d processes (/proc/PID/ns/net): run as root or add CAP_SYS_PTRACE; their containers are named from their cgroups only", proc.denied)
		}
	}
	status = append(status, line)

	if err := r.proc.mntErr; err != nil {
		status = append(status, "cgroup2: "+err.Error())
		r.warn("cgroup2", "names: %v: cgroup IDs are not named", err)
	} else {
		status = append(status, fmt.Sprintf("cgroup2 %s: %d container cgroups", r.proc.mnt, len(cgroups)))
	}

	if n, err := r.engines.readPodman(); err != nil {
		status = append(status, "podman: "+err.Error())
		r.warn("podman", "names: %v", err)
	} else if len(r.engines.podmanStamp) > 0 {
		status = append(status, fmt.Sprintf("podman: %d containers", n))
	} else {
		status = append(status, "podman: no store at "+r.o.PodmanRoot)
	}
	if n, err := r.engines.readDocker(ids); err != nil {
		status = append(status, "docker: "+err.Error())
		r.warn("docker", "names: %v", err)
	} else if r.engines.docker != nil {
		status = append(status, fmt.Sprintf("docker: %d containers", n))
	} else {
		status = append(status, "docker: no store at "+r.o.DockerRoot)
	}
	f.engines = &r.engines

	nsNames, err := ipNetns(r.o.NetnsDir)
	if err != nil {
		status = append(status, "ip netns: "+err.Error())
		r.warn("ipnetns", "names: %v", err)
	}
	f.ipnetns = nsNames
	status = append(status, fmt.Sprintf("ip netns %s: %d names", r.o.NetnsDir, len(nsNames)))

	t, paths := build(f)
	status = append(status, r.veths(t, paths))
	return t, status, ctx.Err()
}

// veths fills the dev table: each link here whose link-netnsid is the ID of
// a namespace with a name. It returns Status's line.
func (r *Resolver) veths(t *tables, paths map[uint64]string) string {
	links, err := peerLinks()
	if err != nil {
		r.warn("veth", "names: %v: host-side devices are not named", err)
		return "veth: " + err.Error()
	}
	want := map[int32]bool{}
	for _, l := range links {
		want[l.nsid] = true
	}
	named := map[uint64]string{}
	for ino, p := range paths {
		if id, ok := t.netns[ino]; ok && id.Label() != "" && p != "" {
			named[ino] = p
		}
	}
	if len(want) == 0 || len(named) == 0 {
		return "veth: 0 host-side devices of named namespaces"
	}
	ids, err := nsidsOf(named, want)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			r.warn("veth-perm", "names: %v: run as root to name host-side devices", err)
		}
		return "veth: " + err.Error()
	}
	for _, l := range links {
		if ino, ok := ids[l.nsid]; ok {
			t.dev[l.name] = t.netns[ino]
		}
	}
	return fmt.Sprintf("veth: %d host-side devices of named namespaces", len(t.dev))
}
