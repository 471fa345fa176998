# skbtrace: build, test, install, bench.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
GO      ?= go
PREFIX  ?= /usr/local

.PHONY: build test vmtest fuzz bench install vet clean

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w -X main.version=$(VERSION)" -o skbtrace ./cmd/skbtrace

vet:
	test -z "$$(gofmt -l $$(git ls-files '*.go'))"
	$(GO) vet ./...

# Tests need root and the kernel's BTF: they check scripts against the
# running kernel. Packages run one at a time (-p 1): tracepoints are global,
# and one package's traffic must not show up in another's trace.
test: vet
	$(GO) test -count=1 -p 1 ./...

# vmtest boots stock Debian kernels (VMKERNELS: 6.1 from bookworm, 6.12 from
# bookworm-backports) in QEMU, one VM per kernel, and runs test/vm/cases against
# the static skbtrace: the kprobe-multi, fentry and kprobe backends that the
# host's kernel may lack. Needs root and apt (the first run fetches the kernels
# into ~/.cache/skbtrace-vm). One VM at a time on a machine: the lock.
VMKERNELS ?= 6.1,6.12
vmtest: build
	flock /tmp/skbtrace-vm.lock test/vm/run.sh -k $(VMKERNELS) ./skbtrace

fuzz:
	$(GO) test ./check -run '^$$' -fuzz FuzzParseCheck -fuzztime 10m -fuzzminimizetime 3s -timeout 0

# bench writes bench/RESULTS.md: compile times, startup, throughput,
# overhead and memory, against bpftrace. Needs root.
bench:
	bash bench/run.sh

install: build
	install -m 0755 skbtrace $(DESTDIR)$(PREFIX)/bin/skbtrace

clean:
	rm -f skbtrace
