module github.com/skbtrace/skbtrace

go 1.25.0

require (
	github.com/alecthomas/participle/v2 v2.1.4
	github.com/cilium/ebpf v0.22.0
	github.com/spf13/pflag v1.1.0
)

require golang.org/x/sys v0.43.0
