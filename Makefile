# redis-variants: the two commands the README gives are `make run` and `make test`.
SHELL := /bin/bash
BIN := .state/bin/redis-variants
GO_PKGS := ./...

.PHONY: setup setup-check build run test unit fuzz lint clean-state

## setup: install and start every real part (dockerd, buildkitd, registry), seed base images and sources
setup:
	bash scripts/setup.sh

## setup-check: say what set-up would install, start and register here, and change nothing (exit 1 when it would change something)
setup-check:
	@RV_SETUP_CHECK=1 bash scripts/setup.sh

# redis-loadgen next to the binary: static (no cgo), so a PGO build's
# training can run it inside any build container.
build:
	go build -buildvcs=auto -o $(BIN) ./cmd/redis-variants # auto: --version names the commit (some machines set GOFLAGS=-buildvcs=false)
	CGO_ENABLED=0 go build -o $(dir $(BIN))redis-loadgen ./loadgen/cmd/redis-loadgen
	CGO_ENABLED=0 go build -o $(dir $(BIN))redis-variants-sbom ./cmd/redis-variants-sbom

## run: build, verify, benchmark, rank and report the default variants.yaml (does its own set-up)
run: setup build
	$(BIN) run -f variants.yaml $(RUN_FLAGS)

## test: every test, on the real daemons (does its own set-up)
# The simulated campaigns (bench/sim_test.go) run without the race
# detector: thousands of whole campaigns through the Bencher, 10x slower
# under it, and the Bencher's concurrency is raced by the real-bench tests.
SIM_TESTS := TestSimulated
test: setup lint
	go test -race -count=1 -p 1 -timeout 40m -skip '$(SIM_TESTS)' $(GO_PKGS)
	go test -count=1 -timeout 20m -run '$(SIM_TESTS)' ./bench

## unit: tests that need no daemon
unit:
	go test -short $(GO_PKGS)

## fuzz: run each fuzz target for FUZZROUNDS rounds (120, about 10 minutes each on 2 vCPUs; CI runs 1); what it finds lands in the package's testdata/fuzz
# The budget is a count of executions, not a duration: a duration's deadline
# races go1.26's fuzz coordinator and fails a target with "context deadline
# exceeded" and no input (go.dev/issue/75804, fixed in go1.27). Each target's
# round is about 5 s of executions on a 2-vCPU machine.
FUZZROUNDS ?= 120
FUZZ_PARALLEL ?= $(shell nproc)
# a new input is shortened for at most this long (go test's 60s stalls a target whose inputs are runtest logs)
FUZZMINIMIZE ?= 5s
FUZZ_TARGETS := ./variants:FuzzParse:20000 ./loadgen/resp:FuzzReader:150000 ./verify:FuzzParseRuntest:15 ./artifact:FuzzManifest:5000 ./artifact:FuzzUntarGz:10000
fuzz:
	@failed=""; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; rest=$${t#*:}; fn=$${rest%%:*}; n=$$(( $${rest##*:} * $(FUZZROUNDS) )); \
		echo "fuzz: $$fn ($$pkg) for $$n executions"; \
		go test -run '^$$' -fuzz "^$$fn$$" -fuzztime $${n}x -fuzzminimizetime $(FUZZMINIMIZE) -parallel $(FUZZ_PARALLEL) $$pkg || failed="$$failed $$fn"; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz: failed:$$failed (the inputs are in each package's testdata/fuzz)"; exit 1; fi; \
	echo "fuzz: every target ran $(FUZZROUNDS) rounds without a failure"

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	go vet $(GO_PKGS)
	@# the tool also runs on arm64 hosts (bench --images there): it must build for them
	GOARCH=arm64 go build -o /dev/null ./cmd/...

## clean-state: stop the daemons set-up started (by their recorded pids; never another's) and remove .state
clean-state:
	@bash scripts/daemons.sh stop-all "$$(pwd)/.state"
	rm -rf .state
