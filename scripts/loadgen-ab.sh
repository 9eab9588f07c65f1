#!/usr/bin/env bash
# A/B of two loadgen binaries (say, before and after a change to its hot
# path) against one Debian redis-server pinned to core 0; each generator
# runs pinned to core 1, interleaved (the order alternates every round).
# Prints per case the median ops/s of each binary over ROUNDS rounds, the
# median and range of the per-round ratios B/A, and each one's CPU time per
# request. Build the two binaries first, e.g.
#
#   git stash; go build -o /tmp/lg-a ./loadgen/cmd/redis-loadgen; git stash pop
#   go build -o /tmp/lg-b ./loadgen/cmd/redis-loadgen
#   scripts/loadgen-ab.sh /tmp/lg-a /tmp/lg-b
#
# Never run it beside a build: the figures need a quiet machine.
set -euo pipefail

A=${1:?usage: loadgen-ab.sh A-BINARY B-BINARY}
B=${2:?usage: loadgen-ab.sh A-BINARY B-BINARY}
ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-3s}
CASES=${CASES:-"set:16 get:16 set:1 lrange_100:16"}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
THREADS=${THREADS:-0}     # loadgen --threads (0: one goroutine per connection; N: the lock-step loop)
PORT=${PORT:-$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')}

for b in redis-server taskset python3; do
	command -v "$b" >/dev/null || { echo "missing $b (apt-get install redis-server util-linux python3)" >&2; exit 1; }
done
work=$(mktemp -d)
cleanup() {
	[[ -n "${srv:-}" ]] && kill "$srv" 2>/dev/null && wait "$srv" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

taskset -c "$SERVER_CPU" redis-server --port "$PORT" --bind 127.0.0.1 --save "" --appendonly no \
	--dir "$work" --logfile "$work/redis.log" &
srv=$!
for _ in $(seq 50); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done

run() { # bin test pipeline -> "ops cpu_us_per_op"
	taskset -c "$CLIENT_CPU" "$1" --port "$PORT" -t "$2" -P "$3" -c 50 -r 100000 --threads "$THREADS" --duration "$DURATION" --warmup 500ms --json |
		python3 -c 'import json,sys; r=json.load(sys.stdin); r=r[0] if isinstance(r,list) else r["results"][0]
ops=r["ops_per_sec"]; cpu=r["client_cpu"]/1e3/max(r["requests"],1)
print(ops, cpu)'
}

printf '%-16s %12s %12s %8s %16s %10s %10s\n' case "A ops/s" "B ops/s" "B/A" "ratio range" "A µs/op" "B µs/op"
for c in $CASES; do
	t=${c%%:*} p=${c##*:}
	: >"$work/a" ; : >"$work/b"
	for r in $(seq "$ROUNDS"); do
		if ((r % 2)); then run "$A" "$t" "$p" >>"$work/a"; run "$B" "$t" "$p" >>"$work/b"
		else run "$B" "$t" "$p" >>"$work/b"; run "$A" "$t" "$p" >>"$work/a"; fi
	done
	python3 - "$c" "$work/a" "$work/b" <<'EOF'
import statistics as st, sys
case, fa, fb = sys.argv[1:]
a = [list(map(float, l.split())) for l in open(fa)]
b = [list(map(float, l.split())) for l in open(fb)]
ratios = [y[0] / x[0] for x, y in zip(a, b)]
print(f"{case:16s} {st.median(x[0] for x in a):12,.0f} {st.median(x[0] for x in b):12,.0f} {st.median(ratios):8.4f} "
      f"[{min(ratios):.4f}, {max(ratios):.4f}] {st.median(x[1] for x in a):10.3f} {st.median(x[1] for x in b):10.3f}")
EOF
done
