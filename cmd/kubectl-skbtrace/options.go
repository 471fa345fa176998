package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/tools/clientcmd"
)

// Defaults of the flags that shape the trace pod.
const (
	defaultImage     = "ghcr.io/skbtrace/skbtrace:latest"
	defaultCRISocket = "/run/containerd/containerd.sock"
)

// defaultCaps are the capabilities the trace container adds: the
// DaemonSet's (BPF, PERFMON, SYSLOG, SYS_RESOURCE) and SYS_PTRACE, to
// stat other processes' /proc/PID/ns/net.
var defaultCaps = []string{"BPF", "PERFMON", "SYSLOG", "SYS_RESOURCE", "SYS_PTRACE"}

// options are the plugin's flags and arguments once parsed.
type options struct {
	target          target        // what to trace
	tool            string        // a bundled tool's name, the one positional after the target
	passthrough     []string      // everything after --, handed to skbtrace as is
	expr            string        // -e
	format          string        // -o / -f: text or json
	write           string        // -w: the local pcapng file
	image           string        // --image
	pullPolicy      string        // --image-pull-policy
	criSocket       string        // --cri-socket
	caps            []string      // --capabilities
	traceNamespace  string        // --trace-namespace ("": the target's)
	timeout         time.Duration // --timeout: the pod's activeDeadlineSeconds (0: none)
	startTimeout    time.Duration // --start-timeout: how long the pod may take to start
	stopGrace       time.Duration // --stop-grace: skbtrace's time to print its maps after Ctrl-C
	keepExitMessage bool          // set by tests: no "exit code" note
	help            bool
	version         bool
	kube            *clientcmd.ConfigOverrides
	loading         *clientcmd.ClientConfigLoadingRules
}

// newFlagSet declares the plugin's flags on o: its own, then kubectl's
// --kubeconfig, --context and -n (and the rest of clientcmd's overrides,
// under their kubectl names).
func newFlagSet(o *options) *pflag.FlagSet {
	fs := pflag.NewFlagSet("kubectl-skbtrace", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVarP(&o.expr, "expr", "e", "", "trace this skbtrace `PROGRAM`")
	fs.StringVarP(&o.format, "output", "o", "", "output `FORMAT`, text or json (skbtrace's -f)")
	fs.StringVarP(&o.format, "format", "f", "", "output `FORMAT`, the same as -o")
	fs.StringVarP(&o.write, "write", "w", "", "write the traced packets to the local `FILE` as pcapng")
	fs.StringVar(&o.image, "image", defaultImage, "the skbtrace container `IMAGE`")
	fs.StringVar(&o.pullPolicy, "image-pull-policy", "IfNotPresent", "the image's pull `POLICY`: IfNotPresent, Always or Never")
	fs.StringVar(&o.criSocket, "cri-socket", defaultCRISocket, "the node's container runtime (CRI) `SOCKET`, mounted into the trace pod for pod names")
	fs.StringSliceVar(&o.caps, "capabilities", defaultCaps, "the `CAPS` the trace container adds, all others dropped (SYS_RESOURCE matters only on kernels before 5.11; SYS_PTRACE names pods' network namespaces)")
	fs.StringVar(&o.traceNamespace, "trace-namespace", "", "create the trace pod in `NS` (default: the target pod's namespace; for a node, the context's)")
	fs.DurationVar(&o.timeout, "timeout", 0, "end the trace after `D` at the latest (the pod's activeDeadlineSeconds; 0: no limit)")
	fs.DurationVar(&o.startTimeout, "start-timeout", 2*time.Minute, "give up if the trace pod has not started within `D`")
	fs.DurationVar(&o.stopGrace, "stop-grace", 10*time.Second, "after Ctrl-C, give skbtrace `D` to print its maps and exit")
	fs.BoolVarP(&o.help, "help", "h", false, "show this help")
	fs.BoolVar(&o.version, "version", false, "print the version")

	o.loading = clientcmd.NewDefaultClientConfigLoadingRules()
	o.kube = &clientcmd.ConfigOverrides{}
	fs.StringVar(&o.loading.ExplicitPath, "kubeconfig", "", "the kubeconfig `FILE` (default: $KUBECONFIG, then ~/.kube/config)")
	fs.StringVar(&o.kube.CurrentContext, "context", "", "the kubeconfig `CONTEXT` to use")
	fs.StringVar(&o.kube.Context.Cluster, "cluster", "", "the kubeconfig `CLUSTER` to use")
	fs.StringVar(&o.kube.Context.AuthInfo, "user", "", "the kubeconfig `USER` to use")
	fs.StringVarP(&o.kube.Context.Namespace, "namespace", "n", "", "the target pod's `NAMESPACE` (default: the context's)")
	fs.StringVar(&o.kube.ClusterInfo.Server, "server", "", "the API server's `ADDRESS`")
	fs.StringVar(&o.kube.AuthInfo.Token, "token", "", "a bearer `TOKEN` for the API server")
	fs.StringVar(&o.kube.Timeout, "request-timeout", "", "the timeout of a single API request (e.g. 30s; 0: none)")
	fs.BoolVar(&o.kube.ClusterInfo.InsecureSkipTLSVerify, "insecure-skip-tls-verify", false, "do not check the API server's certificate")
	return fs
}

// parseArgs reads the command line: flags anywhere before --, then the
// target (pod/NAME, node/NAME, pod NAME, node NAME or NAME), then at most
// one bundled tool's name; what follows -- goes to skbtrace unchanged.
func parseArgs(argv []string) (*options, error) {
	o := &options{}
	fs := newFlagSet(o)
	if err := fs.Parse(argv); err != nil {
		return nil, usageError("%v", err)
	}
	if o.help || o.version {
		return o, nil
	}
	args := fs.Args()
	if dash := fs.ArgsLenAtDash(); dash >= 0 {
		args, o.passthrough = args[:dash], args[dash:]
	}
	if len(args) == 1 && args[0] == "version" {
		o.version = true
		return o, nil
	}
	if len(args) == 0 {
		return nil, usageError("name a pod or a node to trace, such as pod/web-0 or node/worker-1")
	}
	t, rest, err := parseTarget(args)
	if err != nil {
		return nil, err
	}
	o.target = t
	switch len(rest) {
	case 0:
	case 1:
		o.tool = rest[0]
	default:
		return nil, usageError("unexpected arguments %q: after the target, one tool's name at most; skbtrace's own arguments go after --", strings.Join(rest[1:], " "))
	}
	if o.format != "" && o.format != "text" && o.format != "json" {
		return nil, usageError("-o takes text or json, not %q", o.format)
	}
	switch o.pullPolicy {
	case "IfNotPresent", "Always", "Never":
	default:
		return nil, usageError("--image-pull-policy takes IfNotPresent, Always or Never, not %q", o.pullPolicy)
	}
	for _, a := range o.passthrough {
		if a == "-w" || a == "--write" || strings.HasPrefix(a, "--write=") || (strings.HasPrefix(a, "-w") && !strings.HasPrefix(a, "--")) {
			return nil, usageError("-w writes a file here, on this machine: put it before --, as in kubectl skbtrace %s -w trace.pcapng -- ...", o.target)
		}
	}
	if o.timeout < 0 || o.startTimeout <= 0 || o.stopGrace < 0 {
		return nil, usageError("--timeout, --start-timeout and --stop-grace take positive durations")
	}
	return o, nil
}

// errUsage is an error in the command line, reported with a pointer to
// --help.
type errUsage struct{ msg string }

func (e errUsage) Error() string { return e.msg + " (see kubectl skbtrace --help)" }

func usageError(format string, a ...any) error { return errUsage{fmt.Sprintf(format, a...)} }
