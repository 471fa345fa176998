# skbtrace: build, test, install, bench.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
GO      ?= go
PREFIX  ?= /usr/local

.PHONY: build build-arm64 kubectl-skbtrace test vmtest fuzz bench install vet clean image release k8s-bins

# build writes ./skbtrace for this machine; with GOARCH set to another
# architecture (make build GOARCH=arm64, or make build-arm64) it writes
# ./skbtrace-GOARCH. Static either way (CGO_ENABLED=0).
HOSTARCH := $(shell $(GO) env GOHOSTARCH)
BIN      := $(if $(filter-out $(HOSTARCH),$(GOARCH)),skbtrace-$(GOARCH),skbtrace)
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w -X main.version=$(VERSION)" -o $(BIN) ./cmd/skbtrace

# kubectl-skbtrace writes ./kubectl-skbtrace, the kubectl plugin (static):
# on PATH, `kubectl skbtrace pod/NAME` runs skbtrace on the pod's node.
kubectl-skbtrace:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w -X main.version=$(VERSION)" -o kubectl-skbtrace ./cmd/kubectl-skbtrace

build-arm64:
	$(MAKE) build GOARCH=arm64

# image builds the container image $(IMAGE):$(VERSION) (and :latest) with
# podman, no Docker daemon: Containerfile, FROM scratch, the static binary
# alone, labelled with the version (org.opencontainers.image.*). The build
# context is dist/image, which holds the binary and nothing else.
IMAGE    ?= ghcr.io/skbtrace/skbtrace
REVISION := $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
image:
	rm -rf dist/image && mkdir -p dist/image
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w -X main.version=$(VERSION)" -o dist/image/skbtrace ./cmd/skbtrace
	podman build -q -f Containerfile --build-arg VERSION=$(VERSION) --build-arg REVISION=$(REVISION) \
		--build-arg CREATED=$$(date -u +%Y-%m-%dT%H:%M:%SZ) -t $(IMAGE):$(VERSION) -t $(IMAGE):latest dist/image

# release writes dist/skbtrace-VERSION-linux-amd64 and -arm64, static
# (CGO_ENABLED=0) and stamped with the version (skbtrace --version), and
# dist/SHA256SUMS for them (sha256sum -c SHA256SUMS in dist/ checks them).
RELEASEARCHS := amd64 arm64
release:
	mkdir -p dist && rm -f dist/skbtrace-*-linux-* dist/SHA256SUMS
	set -e; for a in $(RELEASEARCHS); do \
		CGO_ENABLED=0 GOOS=linux GOARCH=$$a $(GO) build -trimpath -ldflags "-s -w -X main.version=$(VERSION)" \
			-o dist/skbtrace-$(VERSION)-linux-$$a ./cmd/skbtrace; \
	done
	cd dist && sha256sum skbtrace-$(VERSION)-linux-* > SHA256SUMS

vet:
	test -z "$$(gofmt -l $$(git ls-files '*.go'))"
	$(GO) vet ./...

# Tests need root and the kernel's BTF: they check scripts against the
# running kernel. Packages run one at a time (-p 1): tracepoints are global,
# and one package's traffic must not show up in another's trace. A
# package's tests may take longer than go test's default 10 minutes
# (cmd/skbtrace's end-to-end tests, the clusters): 40 minutes each.
test: vet k8s-bins
	$(GO) test -count=1 -p 1 -timeout 40m ./...

# k8s-bins builds kube-apiserver and kubelet (v1.37.2, from the Go module
# proxy) for internal/k8stest's clusters, once: they are cached in
# ~/.cache/skbtrace-k8s/VERSION (SKBTRACE_K8S_CACHE). Cold, 5 minutes on an
# idle 2-core machine (22 on a busy one); warm, nothing.
k8s-bins:
	GO=$(GO) test/k8s/bins.sh

# vmtest boots stock Debian kernels (VMKERNELS: 5.10 from bullseye, 6.1 from
# bookworm, 6.12 from bookworm-backports, 6.12-arm64 from bookworm-backports in
# qemu-system-aarch64; or any SUITE or SUITE/ARCH, see test/vm/kernels.sh) in
# QEMU, one VM per kernel, and runs test/vm/cases against the static skbtrace
# (./skbtrace-arm64 on arm64 kernels): the kprobe-multi, fentry and kprobe
# backends that the host's kernel may lack. Needs root and apt (the first run
# fetches the kernels into ~/.cache/skbtrace-vm). One VM at a time on a
# machine: the lock.
VMKERNELS ?= 5.10,6.1,6.12,6.12-arm64
VMARM64   := $(findstring arm64,$(VMKERNELS))
vmtest: build $(if $(VMARM64),build-arm64)
	flock /tmp/skbtrace-vm.lock test/vm/run.sh -k $(VMKERNELS) $(if $(VMARM64),-a ./skbtrace-arm64) ./skbtrace

fuzz:
	$(GO) test ./check -run '^$$' -fuzz FuzzParseCheck -fuzztime 10m -fuzzminimizetime 3s -timeout 0

# bench writes bench/RESULTS.md: compile times, startup, throughput,
# overhead and memory, against bpftrace. Needs root.
bench:
	bash bench/run.sh

install: build
	install -m 0755 skbtrace $(DESTDIR)$(PREFIX)/bin/skbtrace

clean:
	rm -f skbtrace skbtrace-amd64 skbtrace-arm64
	rm -rf dist
