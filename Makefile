# netmortem: offline analyzer for Kubernetes network incidents.
GO          ?= go
BIN         ?= bin/netmortem
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
FUZZTIME    ?= 10s
FUZZMINIMIZETIME ?= 100x
DEMO_BUNDLE ?= fixtures/incidents/ephemeral-nodeport
SCREENSHOT_INCIDENT ?= incidents/ephemeral-nodeport
BENCH_CAPTURE ?=
# The version, commit and commit date `netmortem version` prints, from git
# when this is a git tree (left to the Go toolchain's stamp otherwise).
BUILDINFO   := github.com/netmortem/netmortem/internal/buildinfo
VERSION     ?= $(shell git describe --tags --always --dirty 2>/dev/null)
COMMIT      ?= $(shell git rev-parse HEAD 2>/dev/null)
DATE        ?= $(shell git log -1 --format=%cI 2>/dev/null)
LDFLAGS     ?= $(if $(VERSION),-X $(BUILDINFO).version=$(VERSION)) $(if $(COMMIT),-X $(BUILDINFO).commit=$(COMMIT)) $(if $(DATE),-X $(BUILDINFO).date=$(DATE))

# What is built without the race detector is built with cgo off, as make
# build and the release are: lint, vet, check-docs, the tests run without
# -race and the builds the tests make (TestLaptopBuildSameOutput, e2e/scale,
# newrule) then share one compile of each package that imports net (two
# thirds of the fleet build) instead of making one with cgo and one without.
# The race detector needs cgo: go test -race keeps Go's default.
NOCGO       = CGO_ENABLED=0

.PHONY: all build build-fleet test test-ports demo lint check-goreleaser fuzz fixtures new-rule query-fixture bench pgo bench-scale bench-memory docs check-docs browser-deps test-deps test-servers test-server-minio test-server-postgres image screenshots clean

all: build

## build: the laptop build, a static binary (no cgo: glibc's per-thread
## malloc arenas would reserve hundreds of MB of address space that
## netmortem never uses), stamped with the version from git describe:
## local bundles, JSON Lines results, no object-storage or database client
build:
	CGO_ENABLED=0 $(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/netmortem

## build-fleet: the fleet build (-tags fleet), as the container image and
## the Indexed Job run it: the laptop build plus object storage (s3://,
## gs://, azblob://, file://) and results databases (SQLite, PostgreSQL)
## (docs/scale.md, "Two builds")
FLEET_BIN ?= bin/netmortem-fleet
build-fleet:
	CGO_ENABLED=0 $(GO) build -tags fleet -ldflags '$(LDFLAGS)' -o $(FLEET_BIN) ./cmd/netmortem

## test: vet, then the tests in the fleet build (-tags fleet: the tests of
## object storage and of the databases too): those of the packages whose
## code runs goroutines under the race detector, the rest without it; then
## the tests of the packages that differ in the laptop build
## (TestLaptopBuildSameOutput compares the two builds' output)
# The race detector finds races only where goroutines run: in capture/track's
# two-core pipeline, flows' hand-on, the batch workers, operand's and
# source's readers, and in the tests that drive them (capture's, results',
# e2e/scale's): RACE_PKGS run whole under it. The other packages' code runs
# on one goroutine (parse, analyzer and its rules, report, timeline ...):
# under the race detector their tests took five times as long and found
# nothing it could, so they run without it. cmd/netmortem's and e2e's tests
# run the whole program or analysis on every fixture: under the race
# detector only those that reach its concurrency end to end
# (WHOLE_RACE_TESTS: the batch workers and stores, flows' hand-on, the cores,
# timeouts, signals, parallel runs), all of them without it. On 2 cores with
# empty caches, running every other package under the race detector made
# make test take 22 minutes.
RACE_PKGS = ./capture/... ./flows ./source ./internal/batch ./internal/operand ./results/... ./e2e/scale
WHOLE_PKGS = ./cmd/netmortem ./e2e
WHOLE_RACE_TESTS = TestFlows.*|TestBatch|TestBatchShards|TestBatchDB|TestBatchMinIO|TestBatchInterruptResume|TestCoresSameOutput|TestParallelRuns|TestAnalyzeTimeout|TestStuckRead|TestReadDone|TestNextEvidenceBringsBack|TestPartialBundles|TestDamagedBundle
# The tests of RACE_PKGS that repeat one check over many inputs (on code
# the race detector sees run on a few of them) check a sample under the
# race detector (testutil.RaceSample), then every input without.
NORACE_TESTS = TestPlainRecordsSamePaths|TestPlainRecordsSeries|TestHandOnSameAttempts|TestWriteFirstTouchesEveryPage|TestFeedReusesWindows|TestCSVWriterHandedOnAsHeld
NORACE_PKGS = ./capture ./capture/track ./flows

# go test's output goes through internal/testreport, which prints it as
# go test would and ends with the tests skipped, one line per reason.
TESTREPORT = bin/testreport

# The packages whose code differs without -tags fleet.
LAPTOP_PKGS = ./source ./internal/operand ./internal/batch ./results/query

# The tests, and the builds of netmortem they make, do without the profile
# (cmd/netmortem/default.pgo): with it, those builds would compile every
# package once more, and what the tests check does not depend on it. So do
# lint and the docs' checks, whose `go run` then links from the packages
# lint compiled: check-docs after lint took 6 s, where with the profile it
# compiled netmortem's 377 packages again (113 s on 2 cores).
test lint docs check-docs: export GOFLAGS := $(strip $(GOFLAGS) -pgo=off)
test:
	$(NOCGO) $(GO) vet ./...
	$(NOCGO) $(GO) vet -tags fleet ./...
	$(NOCGO) $(GO) build -o $(TESTREPORT) ./internal/testreport
	$(call reported,the race run,$(GO) test -tags fleet -json -race -timeout 30m $(RACE_PKGS))
	$(call reported,the whole packages' concurrent tests under -race,$(GO) test -tags fleet -json -race -timeout 30m -run '^($(WHOLE_RACE_TESTS))$$' $(WHOLE_PKGS))
	$(call reported,the sampled tests whole,$(NOCGO) $(GO) test -tags fleet -json -timeout 30m -run '^($(NORACE_TESTS))$$' $(NORACE_PKGS))
	$(call reported,the other packages,$(NOCGO) $(GO) test -tags fleet -json -timeout 30m $$($(GO) list -tags fleet ./... | grep -vxF "$$($(GO) list -tags fleet $(RACE_PKGS))"))
	$(call reported,the laptop build,$(NOCGO) $(GO) test -json -timeout 30m $(LAPTOP_PKGS))
	@$(MAKE) -s --no-print-directory test-ports

## test-ports: the packages that lay data out by hand (capture/track's
## park codec encodes streams word by word) and read captures, vetted and
## tested on a 32-bit system (386), natively where the kernel runs 32-bit
## binaries and through qemu-user where it does not, and on a big-endian
## one (s390x) through qemu-user, which make test-deps installs; without it
## those parts skip, except when CI=true. (The huge page test is left out
## under qemu, which does not pass madvise on; under qemu-i386 the Go
## runtime's preemption signals crash the emulator, so they are off
## there.) About 2.5 minutes with empty build caches: every package vetted
## for 386 took 4.5 more, the Kubernetes types' compile mostly.
PORT_PKGS = ./capture/... ./model
BIG_ENDIAN_TEST = GOARCH=s390x $(NOCGO) $(GO) test -timeout 10m -exec qemu-s390x-static -skip TestHugePages ./capture/track ./capture/pcapfile ./capture/decode
test-ports:
	GOARCH=386 $(NOCGO) $(GO) vet $(PORT_PKGS) ./flows
	@probe=$$(mktemp -d); trap 'rm -rf "$$probe"' EXIT; \
	GOARCH=386 $(NOCGO) $(GO) test -c -o "$$probe/model.test" ./model || exit 1; \
	if "$$probe/model.test" -test.run='^$$' >/dev/null 2>&1; then exec386=; \
	elif command -v qemu-i386-static >/dev/null 2>&1; then exec386='-exec qemu-i386-static -skip TestHugePages'; export GODEBUG=asyncpreemptoff=1; \
	  echo "test-ports: this kernel runs no 32-bit binaries, qemu-i386-static runs them"; \
	elif [ "$$CI" = true ]; then echo "test-ports: this kernel runs no 32-bit binaries and qemu-i386-static is missing (make test-deps installs it)"; exit 1; \
	else echo "test-ports: this kernel runs no 32-bit binaries and qemu-i386-static is missing, the 32-bit tests skip (make test-deps installs it)"; exit 0; fi; \
	echo "GOARCH=386 $(GO) test -timeout 10m $$exec386 $(PORT_PKGS)"; \
	GOARCH=386 $(NOCGO) $(GO) test -timeout 10m $$exec386 $(PORT_PKGS)
	@if command -v qemu-s390x-static >/dev/null 2>&1; then \
	  echo '$(BIG_ENDIAN_TEST)'; $(BIG_ENDIAN_TEST); \
	elif [ "$$CI" = true ]; then echo "test-ports: qemu-s390x-static is missing (make test-deps installs it)"; exit 1; \
	else echo "test-ports: qemu-s390x-static is missing, the big-endian tests skip (make test-deps installs it)"; fi

# reported runs the go test -json command $(2) through $(TESTREPORT), says
# how long it took, named $(1), and fails when either does.
define reported
@exec 4>&1; t0=$$(date +%s); st=$$( { { $(2) 2>&1; echo $$? >&3; } | $(TESTREPORT) >&4; } 3>&1 ); \
  r=$$?; echo "make test: $(1) took $$(( $$(date +%s) - t0 ))s"; [ "$$st" = 0 ] && [ "$$r" = 0 ]
endef

## browser-deps: install Debian's chromium for the browser test of the HTML
## report when it is missing (needs root and apt-get, as on CI; otherwise
## says what to do; the test skips without it, except when CI=true)
browser-deps:
	@if command -v chromium >/dev/null 2>&1 || [ -n "$$NETMORTEM_CHROMIUM" ]; then \
	  echo "browser-deps: $$(command -v chromium || echo $$NETMORTEM_CHROMIUM) is there"; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  start=$$(date +%s); log=$$(mktemp); \
	  export DEBIAN_FRONTEND=noninteractive; \
	  if apt-get install -y -q --no-install-recommends chromium >$$log 2>&1 || \
	    { apt-get update -q >$$log 2>&1 && apt-get install -y -q --no-install-recommends chromium >$$log 2>&1; }; then \
	    echo "browser-deps: installed $$(chromium --version 2>/dev/null) in $$(( $$(date +%s) - start ))s"; rm -f $$log; \
	  else \
	    echo "browser-deps: apt-get could not install chromium:"; tail -5 $$log; rm -f $$log; exit 1; \
	  fi; \
	else \
	  echo "browser-deps: chromium is missing and apt-get cannot install it here (root needed):"; \
	  echo "  install Debian's or your distribution's chromium, or set NETMORTEM_CHROMIUM to a Chromium binary;"; \
	  echo "  without it the browser test of the HTML report is skipped (and fails when CI=true)"; \
	fi

## test-deps: install what the tests that run real tools need, when it is
## missing (needs root and apt-get, as on CI): Chromium (make browser-deps),
## for the collector's test in a network namespace iproute2, tcpdump,
## iptables, nftables, conntrack, dash and shellcheck, and qemu-user for
## make test-ports. Without them those tests skip, except when CI=true.
TEST_TOOLS = ip:iproute2 tcpdump:tcpdump iptables:iptables nft:nftables conntrack:conntrack dash:dash shellcheck:shellcheck qemu-s390x-static:qemu-user-static
test-deps: browser-deps
	@missing=; for tp in $(TEST_TOOLS); do command -v $${tp%%:*} >/dev/null 2>&1 || missing="$$missing $${tp#*:}"; done; \
	if [ -z "$$missing" ]; then echo "test-deps: the collector test's tools are there"; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  log=$$(mktemp); export DEBIAN_FRONTEND=noninteractive; \
	  if apt-get install -y -q --no-install-recommends $$missing >$$log 2>&1 || \
	    { apt-get update -q >$$log 2>&1 && apt-get install -y -q --no-install-recommends $$missing >$$log 2>&1; }; then \
	    echo "test-deps: installed$$missing"; rm -f $$log; \
	  else echo "test-deps: apt-get could not install$$missing:"; tail -5 $$log; rm -f $$log; exit 1; fi; \
	else echo "test-deps: missing$$missing (root and apt-get needed to install them); the collector's test skips without them, except when CI=true"; fi

## test-servers: install the servers the tests of object storage and of
## the database start on loopback (internal/testutil/servers), when they
## are missing: MinIO built from its Go module into GOBIN (GOPATH/bin), and
## Debian's PostgreSQL (needs root and apt-get, as on CI). Without them
## those tests skip, except when CI=true.
# MinIO tags no semantic versions: this is the pseudo-version of the newest
# commit the module proxy serves, which builds with Go 1.26. A cold build
# (empty build cache, modules downloaded) takes 201 CPU-seconds, 107 s on
# 2 idle cores. It is built without optimization or inlining (-N -l, as
# debuggers build): 137 CPU-seconds, 74 s. The tests store and read a few
# small objects, for which an unoptimized server is fast enough.
MINIO_GCFLAGS ?= all=-N -l
MINIO_MODULE  ?= github.com/minio/minio
MINIO_VERSION ?= v0.0.0-20260212201848-7aac2a2c5b7c
test-servers: test-server-minio test-server-postgres

test-server-minio:
	@gobin=$$($(GO) env GOBIN); gobin=$${gobin:-$$($(GO) env GOPATH)/bin}; \
	if command -v minio >/dev/null 2>&1; then echo "test-servers: $$(command -v minio) is there"; \
	elif [ -x "$$gobin/minio" ]; then echo "test-servers: $$gobin/minio is there"; \
	else \
	  start=$$(date +%s); \
	  if $(NOCGO) $(GO) install -gcflags='$(MINIO_GCFLAGS)' $(MINIO_MODULE)@$(MINIO_VERSION); then \
	    echo "test-servers: installed $$gobin/minio ($(MINIO_VERSION)) in $$(( $$(date +%s) - start ))s"; \
	  else echo "test-servers: go install $(MINIO_MODULE)@$(MINIO_VERSION) failed"; exit 1; fi; \
	fi

# Debian's postinst would make and start a cluster of its own; the tests
# make theirs, so postgresql-common is told not to (as Docker's postgres
# image does) before the server is installed.
test-server-postgres:
	@if found=$$(ls -d /usr/lib/postgresql/*/bin/initdb "$$(pg_config --bindir 2>/dev/null)/initdb" 2>/dev/null | head -1) && [ -n "$$found" ]; then \
	  echo "test-servers: $$found is there"; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  start=$$(date +%s); log=$$(mktemp); export DEBIAN_FRONTEND=noninteractive; \
	  install() { apt-get install -y -q --no-install-recommends "$$@" >$$log 2>&1 || \
	    { apt-get update -q >$$log 2>&1 && apt-get install -y -q --no-install-recommends "$$@" >$$log 2>&1; }; }; \
	  if install postgresql-common && \
	    sed -ri 's/^#? *create_main_cluster *=.*$$/create_main_cluster = false/' /etc/postgresql-common/createcluster.conf && \
	    install postgresql; then \
	    echo "test-servers: installed PostgreSQL $$(ls /usr/lib/postgresql) in $$(( $$(date +%s) - start ))s"; rm -f $$log; \
	  else echo "test-servers: apt-get could not install postgresql:"; tail -5 $$log; rm -f $$log; exit 1; fi; \
	else \
	  echo "test-servers: PostgreSQL is missing and apt-get cannot install it here (root needed):"; \
	  echo "  install your distribution's PostgreSQL server (initdb, postgres, createdb);"; \
	  echo "  without it the tests of the PostgreSQL store skip (and fail when CI=true)"; \
	fi

## image: build the container image of deploy/kubernetes/Dockerfile (the
## release image, built from this tree) as $(IMAGE); needs docker
IMAGE ?= netmortem:$(or $(VERSION),devel)
GO_VERSION = $(shell sed -n 's/^go //p' go.mod)
image:
	docker build -f deploy/kubernetes/Dockerfile --build-arg GO_VERSION=$(GO_VERSION) \
	  --build-arg VERSION=$(VERSION) --build-arg COMMIT=$(COMMIT) --build-arg DATE=$(DATE) -t $(IMAGE) .

## screenshots: render the HTML report of $(SCREENSHOT_INCIDENT) in headless
## Chromium at 1280 and 390 pixels and write the PNGs to docs/img/
screenshots:
	rm -f docs/img/report-1280.png docs/img/report-390.png
	NETMORTEM_SCREENSHOTS=docs/img NETMORTEM_SCREENSHOT_INCIDENT=$(SCREENSHOT_INCIDENT) \
	  $(GO) test ./cmd/netmortem -count=1 -v -run '^TestHTMLReportInBrowser$$/^$(SCREENSHOT_INCIDENT)$$'
	@test -s docs/img/report-1280.png && test -s docs/img/report-390.png || \
	  { echo "screenshots: no screenshot was written: the test skipped or did not run (Chromium: make browser-deps)"; exit 1; }

## demo: analyze the committed incident bundle and print the findings
# It builds bin/netmortem quietly (go build reuses what is up to date) and
# runs it, so that its exit code is netmortem's own, said once, and the
# output starts with netmortem's.
demo:
	@$(MAKE) -s --no-print-directory build
	@$(BIN) analyze $(DEMO_BUNDLE); status=$$?; \
	  echo; echo "netmortem exited with $$status (1: findings at or above --fail-on, as expected)"

## lint: gofmt and staticcheck (pinned, fetched through the module proxy)
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(NOCGO) $(GO) run $(STATICCHECK) ./...
	$(NOCGO) $(GO) run $(STATICCHECK) -tags fleet ./...

## check-goreleaser: check .goreleaser.yaml with goreleaser (built through
## the module proxy) and record the file's checksum in
## .ci/goreleaser.sha256: CI builds goreleaser and checks the file again
## only when it no longer matches
GORELEASER ?= github.com/goreleaser/goreleaser/v2@v2.16.0
check-goreleaser:
	GOBIN=$(CURDIR)/bin $(GO) install -gcflags='all=-N -l' $(GORELEASER)
	bin/goreleaser check
	sha256sum .goreleaser.yaml > .ci/goreleaser.sha256

## fuzz: run every fuzz target of every package briefly ($(FUZZTIME) each).
## Go minimizes each new interesting input for 60 s by default, which stalls
## targets whose runs are slow (FuzzRead, FuzzKubeObjects) for the whole
## FUZZTIME: minimizing is bounded to $(FUZZMINIMIZETIME) runs instead.
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$t"; $(GO) test $$pkg -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME); \
	  done; done

## fixtures: regenerate the captured fixtures (needs root, ip netns, tcpdump)
fixtures:
	bash fixtures/make-fixtures.sh

## query-fixture: regenerate fixtures/query/incidents.jsonl, the batch
## results over fixtures/incidents that netmortem query's examples read
query-fixture:
	mkdir -p fixtures/query
	$(GO) run ./cmd/netmortem batch -q -j 2 --out fixtures/query/incidents.jsonl 'fixtures/incidents/*' || test $$? -eq 1

## bench: netmortem side by side with tcpdump, tshark and a bare decode loop
## on a large capture (built on first use from real traffic; needs root then)
bench:
	bash bench/bench.sh $(BENCH_CAPTURE)

## pgo: make cmd/netmortem/default.pgo again, the CPU profile go build
## optimizes netmortem with, from analyze and flows on the bench capture
## (bench/pgo.sh; the capture is built on first use, which needs root)
pgo:
	bash bench/pgo.sh $(BENCH_CAPTURE)

## bench-scale: bundles per second of the Kubernetes Indexed Job run as 1, 2
## and 4 processes over 1,000 bundles in MinIO, writing to PostgreSQL, and of
## a local batch (needs make test-servers)
bench-scale:
	go test -tags fleet -run '^$$' -bench IndexedJob -benchtime 1x -count 3 ./e2e/scale

## bench-memory: peak memory of netmortem analyze on a 1 GB capture whose
## copies are spread over an hour, as a busy node's capture is (built on
## first use from real traffic; needs root then)
bench-memory:
	bash bench/bench-memory.sh

## new-rule: start a rule called $(NAME): its file in analyzer/rules, its
## line in All (all.go), its test and its scenario directory, each with
## TODOs to fill in (docs/CONTRIBUTING.md, "Adding a rule")
new-rule:
	@test -n "$(NAME)" || { echo "usage: make new-rule NAME=my-rule"; exit 2; }
	$(GO) run ./internal/newrule $(NAME)

## docs: regenerate docs/rules.md from the rule registry, docs/inputs.md
## from the format registry, docs/config.md from the rules' parameters, and
## docs/collect.md from the rules' needs and the collector's commands
docs:
	$(NOCGO) $(GO) run ./cmd/netmortem rules -o markdown > docs/rules.md
	$(NOCGO) $(GO) run ./cmd/netmortem rules -o config > docs/config.md
	$(NOCGO) $(GO) run ./cmd/netmortem formats -o markdown > docs/inputs.md
	$(NOCGO) $(GO) run ./cmd/netmortem collect-script --doc > docs/collect.md
	rm -rf docs/rules && $(NOCGO) $(GO) run ./cmd/netmortem rules -o markdown --dir docs/rules

check-docs:
	@$(NOCGO) $(GO) run ./cmd/netmortem rules -o markdown | diff -u docs/rules.md - || \
	  (echo "docs/rules.md is stale: run make docs"; exit 1)
	@$(NOCGO) $(GO) run ./cmd/netmortem formats -o markdown | diff -u docs/inputs.md - || \
	  (echo "docs/inputs.md is stale: run make docs"; exit 1)
	@$(NOCGO) $(GO) run ./cmd/netmortem rules -o config | diff -u docs/config.md - || \
	  (echo "docs/config.md is stale: run make docs"; exit 1)
	@$(NOCGO) $(GO) run ./cmd/netmortem collect-script --doc | diff -u docs/collect.md - || \
	  (echo "docs/collect.md is stale: run make docs"; exit 1)
	@tmp=$$(mktemp -d) && $(NOCGO) $(GO) run ./cmd/netmortem rules -o markdown --dir $$tmp/rules && \
	  diff -ru docs/rules $$tmp/rules; s=$$?; rm -rf $$tmp; \
	  if [ $$s -ne 0 ]; then echo "docs/rules/ is stale: run make docs"; exit 1; fi

clean:
	rm -rf bin
