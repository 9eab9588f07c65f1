#!/usr/bin/env bash
# measure-remote.sh: the two build figures of the multi-machine issue, on
# fresh buildkitd daemons (each its own socket and empty state folder, the
# registry configuration set-up wrote), with the local registry:
#   1. cold build, one builder, --cache-to the registry        (T1)
#   2. a second fresh builder importing that cache (--cache-from) (T2)
#   3. cold build spread over two fresh builders, a job each   (T3)
# It prints T1/T2 (the cache-import ratio) and T1/T3 (two builders against
# one). ONLY (default: two variants of the default file) is what is built;
# nothing else should run on the machine meanwhile.
#   scripts/measure-remote.sh                  # after scripts/setup.sh
#   ONLY=gcc-o3-native scripts/measure-remote.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ONLY=${ONLY:-gcc-o3-native,clang16-o3-lto}
STATE=${RV_STATE:-.state}
REGISTRY=${RV_REGISTRY:-127.0.0.1:5000}
WORK=$(mktemp -d /tmp/redis-variants-measure-XXXXXX)
CACHE="$REGISTRY/redis-variants-buildcache-$(date +%s)"
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT

go build -o "$WORK/redis-variants" ./cmd/redis-variants
cp "$STATE/bin/redis-loadgen" "$WORK/" 2>/dev/null || true
RV="$WORK/redis-variants"

# daemon NAME: a fresh buildkitd; prints its address.
daemon() {
	local d="$WORK/$1"
	mkdir -p "$d"
	grep -v '^root' "$STATE/buildkit/buildkitd.toml" | awk '/^\[grpc\]/{skip=1;next} /^\[/{skip=0} !skip' >"$d/buildkitd.toml"
	"$STATE/bin/buildkitd" --config "$d/buildkitd.toml" --root "$d/root" --addr "unix://$d/buildkitd.sock" >"$d/log" 2>&1 &
	PIDS+=($!)
	for _ in $(seq 120); do
		"$STATE/bin/buildctl" --addr "unix://$d/buildkitd.sock" debug workers >/dev/null 2>&1 && break
		sleep 0.5
	done
	echo "unix://$d/buildkitd.sock"
}

# timed LABEL ARGS...: runs a build, prints the seconds it took.
timed() {
	local label=$1
	shift
	local t0 t1
	t0=$(date +%s.%N)
	"$RV" build --runs "$WORK/runs" --run "$WORK/runs/$label" --only "$ONLY" --jobs 1 --force --progress plain "$@" \
		>"$WORK/$label.out" 2>"$WORK/$label.err" || { tail -20 "$WORK/$label.err" >&2; exit 1; }
	t1=$(date +%s.%N)
	echo "$t1 - $t0" | bc
}

A=$(daemon a)
T1=$(timed one-cold --buildkit "$A" --cache-to "$CACHE")
echo "1. one fresh builder, cold, exporting its cache: ${T1}s"
B=$(daemon b)
T2=$(timed cache-import --buildkit "$B" --cache-from "$CACHE")
echo "2. another fresh builder importing the cache:     ${T2}s"
grep -h "cached" "$WORK/cache-import.out" | sed 's/^/     /'
C1=$(daemon c1)
C2=$(daemon c2)
T3=$(timed two-cold --builder "$C1,jobs=1" --builder "$C2,jobs=1" --cache-to "$CACHE-two")
echo "3. two fresh builders, one job each, cold:        ${T3}s"
printf 'cache-import ratio T1/T2 = %.2f; two builders against one T1/T3 = %.2f (%s, %d cores)\n' \
	"$(echo "$T1 / $T2" | bc -l)" "$(echo "$T1 / $T3" | bc -l)" "$ONLY" "$(nproc)"
