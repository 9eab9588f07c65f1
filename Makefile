# redis-variants: the two commands the README gives are `make run` and `make test`.
SHELL := /bin/bash
BIN := .state/bin/redis-variants
GO_PKGS := ./...

.PHONY: setup build run test unit lint clean-state

## setup: install and start every real part (dockerd, buildkitd, registry), seed base images and sources
setup:
	bash scripts/setup.sh

# redis-loadgen next to the binary: static (no cgo), so a PGO build's
# training can run it inside any build container.
build:
	go build -o $(BIN) ./cmd/redis-variants
	CGO_ENABLED=0 go build -o $(dir $(BIN))redis-loadgen ./loadgen/cmd/redis-loadgen

## run: build, verify, benchmark, rank and report the default variants.yaml (does its own set-up)
run: setup build
	$(BIN) run -f variants.yaml $(RUN_FLAGS)

## test: every test, on the real daemons (does its own set-up)
test: setup lint
	go test -race -count=1 -p 1 -timeout 40m $(GO_PKGS)

## unit: tests that need no daemon
unit:
	go test -short $(GO_PKGS)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	go vet $(GO_PKGS)

## clean-state: stop the daemons and remove .state (caches, images, registry data)
clean-state:
	-pkill -x buildkitd
	-pkill -x dockerd
	-pkill -f 'docker-registry serve'
	rm -rf .state
