#!/usr/bin/env bash
# Compares redis-variants loadgen with redis-benchmark against one Debian
# redis-server pinned to core 0; both generators run pinned to core 1,
# interleaved (alternating which goes first), -c 50 at -P 1 and -P 16, for
# SET, GET, LPUSH and LRANGE_100. Prints, per case, the median ops/s of each
# tool over ROUNDS rounds, their ratio (loadgen / redis-benchmark, single
# threaded), the per-round ratios (noise), and loadgen's CPU time per
# request and peak RSS.
#
#   scripts/loadgen-vs-redis-benchmark.sh            # defaults
#   ROUNDS=5 N1=300000 N16=2000000 scripts/loadgen-vs-redis-benchmark.sh
#   THREADS=1 scripts/loadgen-vs-redis-benchmark.sh  # loadgen --threads 1 (one goroutine multiplexing all 50 connections)
set -euo pipefail

ROUNDS=${ROUNDS:-3}
N1=${N1:-200000}          # requests per run at -P 1
N16=${N16:-1000000}       # requests per run at -P 16
TESTS=${TESTS:-"SET GET LPUSH LRANGE_100"}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
THREADS=${THREADS:-0}
PORT=${PORT:-$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')}

cd "$(dirname "$0")/.."
work=$(mktemp -d)
cleanup() {
	[[ -n "${srv:-}" ]] && kill "$srv" 2>/dev/null && wait "$srv" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

for b in redis-server redis-benchmark taskset python3 go; do
	command -v "$b" >/dev/null || { echo "missing $b (apt-get install redis-server redis-tools util-linux python3)" >&2; exit 1; }
done

go build -o "$work/rv" ./loadgen/cmd/redis-loadgen

taskset -c "$SERVER_CPU" redis-server --port "$PORT" --bind 127.0.0.1 --save "" --appendonly no \
	--dir "$work" --logfile "$work/redis.log" &
srv=$!
for _ in $(seq 100); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.05; done

echo "redis-server $(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/') on 127.0.0.1:$PORT (core $SERVER_CPU); generators on core $CLIENT_CPU; -c 50; $ROUNDS rounds; loadgen --threads $THREADS"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

rb() { # test pipeline n -> rps
	local t=$1 p=$2 n=$3 title
	title=$t; [[ $t == LRANGE_100 ]] && title="LRANGE_100 (first 100 elements)"
	taskset -c "$CLIENT_CPU" redis-benchmark -p "$PORT" -c 50 -P "$p" -n "$n" -t "${t,,}" --csv 2>/dev/null |
		python3 -c 'import csv,sys; t=sys.argv[1]; print(next(r[1] for r in csv.reader(sys.stdin) if r and r[0]==t))' "$title"
}
lg() { # test pipeline n -> "rps cpu_us_per_op max_rss_mib"
	local t=$1 p=$2 n=$3
	taskset -c "$CLIENT_CPU" "$work/rv" --port "$PORT" -c 50 -P "$p" -n "$n" -t "$t" --threads "$THREADS" --json |
		python3 -c '
import json,sys
t=sys.argv[1]
for r in json.load(sys.stdin)["results"]:
    if r["test"]==t:
        assert r["errors"]==0, r["error_samples"]
        print("%.2f %.3f %.1f" % (r["ops_per_sec"], r["client_cpu"]/1e3/r["requests"], r["client_max_rss"]/2**20))' "$t"
}

declare -A RB LG CPU RSS
for round in $(seq "$ROUNDS"); do
	for p in 1 16; do
		n=$N1; [[ $p == 16 ]] && n=$N16
		for t in $TESTS; do
			k="$t P$p"
			if (( round % 2 )); then
				a=$(rb "$t" "$p" "$n"); read -r b c m < <(lg "$t" "$p" "$n")
			else
				read -r b c m < <(lg "$t" "$p" "$n"); a=$(rb "$t" "$p" "$n")
			fi
			RB[$k]+="$a "; LG[$k]+="$b "; CPU[$k]+="$c "; RSS[$k]+="$m "
			printf 'round %d  %-12s P%-2s  redis-benchmark %12.0f  loadgen %12.0f  ratio %.3f\n' "$round" "$t" "$p" "$a" "$b" "$(python3 -c "print($b/$a)")"
		done
	done
done

echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
printf '%-12s %-4s %16s %16s %8s %18s %14s %12s\n' test P "redis-benchmark" loadgen ratio "round ratios" "cpu µs/op" "rss MiB"
fail=0
for p in 1 16; do
	for t in $TESTS; do
		k="$t P$p"
		line=$(python3 - "${RB[$k]}" "${LG[$k]}" "${CPU[$k]}" "${RSS[$k]}" <<'PY'
import statistics as st, sys
rb=[float(x) for x in sys.argv[1].split()]; lg=[float(x) for x in sys.argv[2].split()]
cpu=[float(x) for x in sys.argv[3].split()]; rss=[float(x) for x in sys.argv[4].split()]
ratios=" ".join("%.2f" % (b/a) for a,b in zip(rb,lg))
r=st.median(lg)/st.median(rb)
print("%16.0f %16.0f %8.3f %18s %14.3f %12.1f %d" % (st.median(rb), st.median(lg), r, ratios, st.median(cpu), max(rss), r < 0.9))
PY
)
		printf '%-12s %-4s %s\n' "$t" "$p" "${line% *}"
		fail=$(( fail + ${line##* } ))
	done
done
echo
if (( fail )); then echo "$fail case(s) below 0.9"; exit 1; fi
echo "every ratio >= 0.9"
