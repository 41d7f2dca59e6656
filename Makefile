# connector — build, test and demo targets. `make help` lists them.

GO          ?= go
BIN         ?= ./connector
DEMO_ADDR   ?= 127.0.0.1:8787
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
FUZZTIME    ?= 30s
# GoReleaser v2.16.0 is the newest that builds with Go 1.26; syft writes the SBOMs.
GORELEASER  ?= github.com/goreleaser/goreleaser/v2@v2.16.0
SYFT        ?= github.com/anchore/syft/cmd/syft@v1.57.1
GOBIN       ?= $(shell $(GO) env GOPATH)/bin
# VERSION is what `connector --version` prints: git describe of the checkout, "dev" outside git.
VERSION     ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS     := -X connector/cmd.version=$(VERSION)
SHELL       := bash

.PHONY: help build install release-check test plain-chain race-chain image-test lint fmt-check vet staticcheck unit unit-plain unit-race demo replay fuzz bench bench-go corpus screenshots clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

build: ## build ./connector, its version from git describe
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) .

install: ## go install connector into GOBIN (default: GOPATH/bin), its version from git describe as make build's
	GOBIN=$(GOBIN) $(GO) install -ldflags "$(LDFLAGS)" .

# test runs two chains side by side, which share no build: go vet and then every test,
# beside staticcheck (its own type-checking) and then the race detector's pass (its own
# instrumented build). One chain's compiling fills the time the other spends waiting on
# its tests' servers and clocks; go test prints each package's result whole, so the two
# outputs mix by package, never within one.
test: fmt-check ## gofmt check, then go vet and every test once beside staticcheck and the -race pass
	@$(MAKE) --no-print-directory -j2 plain-chain race-chain

plain-chain:
	@$(MAKE) --no-print-directory vet
	@$(MAKE) --no-print-directory unit-plain

race-chain:
	@$(MAKE) --no-print-directory staticcheck
	@$(MAKE) --no-print-directory unit-race

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

staticcheck:
	@test -x $(GOBIN)/staticcheck || $(GO) install $(STATICCHECK)
	$(GOBIN)/staticcheck ./...

# Every test runs once without the race detector (the walks of the shared corpus included),
# then the race detector runs where goroutines meet: the packages that start goroutines or
# share state between them and have a test where they meet (RACE_PKGS: `grep -l 'go func\|sync\.\|chan '`
# finds the candidates; a package whose tests are all one goroutine is left out), and
# the end-to-end cases of cmd that read at once (concurrency, prefetch, async jobs, budgets,
# interrupts, token rotation, replays, dev). The rest is one goroutine per test, and a long
# test of one goroutine in a race package stands aside under -race (internal/racetest).
# `go vet` ran on its own before, so the tests do not vet again (-vet=off).
RACE_PKGS ?= auth budget builder demoapi dev har httpx incremental manifest oauthflow output record run serve session template
RACE_CMD  ?= Concurren|Prefetch|Async|Budget|Interrupt|Killed|BrokenPipe|Rotation|Replay|Dev
unit: unit-plain unit-race

unit-plain:
	$(GO) test -count=1 -vet=off ./...

unit-race:
	$(GO) test -race -count=1 -vet=off $(addprefix ./pkg/,$(RACE_PKGS))
	$(GO) test -race -count=1 -vet=off -run '$(RACE_CMD)' ./cmd

# The release of .goreleaser.yaml as a snapshot: every binary, archive, checksum and SBOM in
# dist/, nothing published. The image needs a Docker daemon; without one it is skipped (make
# image-test builds the same Dockerfile with podman).
release-check: ## goreleaser check, then a snapshot release into dist/ (binaries, archives, checksums, SBOMs, image), nothing published
	@test -x $(GOBIN)/goreleaser || $(GO) install $(GORELEASER)
	@test -x $(GOBIN)/syft || $(GO) install $(SYFT)
	PATH="$(GOBIN):$$PATH" goreleaser check
	@if docker info >/dev/null 2>&1; then skip=publish; else skip=publish,docker; \
	  echo "release-check: no Docker daemon, the image is skipped"; fi; \
	  echo PATH="$(GOBIN):\$$PATH" goreleaser release --snapshot --clean --skip=$$skip; \
	  PATH="$(GOBIN):$$PATH" goreleaser release --snapshot --clean --skip=$$skip

# CGO_ENABLED=0 and -trimpath: the flags of the binary it builds, so that both share one build cache.
image-test: ## build the Dockerfile's image with podman, run its airbyte commands as its user, compare with the local binary's
	CGO_ENABLED=0 $(GO) run -trimpath ./internal/imagetest -version $(VERSION)

demo: export DEMO_ADDR := $(DEMO_ADDR)
demo: build ## start the demo API, read an example definition to stdout, stop the API
	@$(BIN) demo-api --addr $(DEMO_ADDR) --log=false & pid=$$!; \
	trap 'kill $$pid 2>/dev/null' EXIT; \
	host=$${DEMO_ADDR%:*}; port=$${DEMO_ADDR##*:}; \
	for i in $$(seq 50); do (exec 3<>/dev/tcp/$$host/$$port) 2>/dev/null && break; sleep 0.1; done; \
	$(BIN) read definitions/bearer-auth.yaml --testing-values testing-values.example.yaml --max-records 5

replay: build ## replay every recording in definitions/testdata offline and compare the records (connector test)
	$(BIN) test definitions/*.yaml

fuzz: ## run every fuzz target for FUZZTIME each (default 30s)
	@$(GO) list ./... | while read pkg; do \
	  for f in $$($(GO) test -list 'Fuzz.*' $$pkg | grep '^Fuzz'); do \
	    echo "fuzz $$pkg $$f ($(FUZZTIME))"; \
	    $(GO) test -run='^$$' -fuzz="^$$f$$" -fuzztime=$(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

bench: build ## time connector against a local generator API and a raw-fetch baseline (one table, < 1 min)
	$(GO) run ./internal/bench -bin $(BIN)

bench-go: ## run the Go micro-benchmarks (go test -bench)
	$(GO) test -run='^$$' -bench=. -benchmem ./...

# The README's pictures of connector dev's page, taken by the browser tests' harness in
# headless Chromium (the Debian package chromium) against the demo API in-process.
screenshots: ## the README's pictures of connector dev (light and dark) into docs/, with headless Chromium
	@mkdir -p docs
	set -o pipefail; CONNECTOR_SCREENSHOTS=$(CURDIR)/docs $(GO) test -count=1 -run '^TestScreenshots$$' -v ./pkg/dev/ | grep -E '^(---|ok|FAIL)|wrote'

corpus: build ## validate the real definitions of ../shared/corpus and classify the results
	python3 ../shared/tools/corpus-report --bin $(BIN)

clean:
	rm -f $(BIN)
	rm -rf dist
