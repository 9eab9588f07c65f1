#!/usr/bin/env bash
# scripts/window-study.sh BUILD_RUN [DURATION...]: the window-length study.
# For each window length (default 250ms 500ms 1s 2s) it benchmarks the
# official image against the primary reference, and the A/A control, with
# the quick profile's load (SET, GET, LRANGE_100 at P64; 1 s warm-up, 300 ms
# before later tests) in 4 replicates of 3 windows per test, each length in
# its own run folder (a copy of BUILD_RUN's builds and proofs), then prints
# per length: windows kept, server-core busy (min, median), softirq
# (median), the two cgroup shares' sum and the client CPU (min, median),
# and the pooled sd of the log ratio between windows of one replicate.
# Never run it beside a build: it takes the machine lock like bench does.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
src=${1:?usage: scripts/window-study.sh BUILD_RUN [DURATION...]}
shift
durs=("$@")
[ ${#durs[@]} -gt 0 ] || durs=(250ms 500ms 1s 2s)
RV=${RV:-.state/bin/redis-variants}
[ -d "$src/builds" ] || { echo "window-study: $src has no builds/" >&2; exit 1; }
ref=$(jq -r '.references[0].name // empty' "$src/plan.json" 2>/dev/null || true)
file=$(mktemp --suffix=.yaml)
trap 'rm -f "$file"' EXIT
{
	sed -n '1,/^profiles:/p' variants.yaml
	for d in "${durs[@]}"; do
		cat <<EOF
  w$d:
    tests: [SET, GET, LRANGE_100]
    pipelines: [64]
    duration: $d
    warmup: 1s
    warmup_next: 300ms
    replicates: 4
    windows: 3
    axis_replicates: 0
    trials: 0
    memory: off
    budget: 20m
EOF
	done
	sed -n '/^profiles:/,$p' variants.yaml | tail -n +2
} >"$file"
printf '%-7s %8s %14s %8s %12s %12s %10s\n' window kept "core busy" softirq "cgroups" "client" "window sd"
for d in "${durs[@]}"; do
	out=runs/$(basename "$src")-w$d
	rm -rf "$out"
	mkdir -p "$out"
	cp -r "$src/builds" "$src/verify" "$out/"  # the plan is written from the study file
	"$RV" bench -f "$file" --run "$out" --profile "w$d" --only official --only "${ref:-stock-debian}" \
		--runtime host --progress quiet >"$out.bench.log" 2>&1 || { tail -5 "$out.bench.log" >&2; }
	python3 - "$out" "$d" <<'PY'
import json, glob, statistics as st, sys
out, d = sys.argv[1], sys.argv[2]
busy, soft, cg, cl, kept, rej = [], [], [], [], 0, 0
for f in glob.glob(out + "/pairs/**/*.json", recursive=True):
    r = json.load(open(f))
    for w in r.get("windows") or []:
        kept += 1
        busy.append(w["core_busy"]); soft.append(w.get("softirq", 0))
        cg.append(w["image"]["cpu_share"] + w["base"]["cpu_share"]); cl.append(w.get("client_busy", 0))
    rej += len(r.get("rejected") or [])
# the pooled sd of the log ratio between windows of one replicate and test
ss, df = 0.0, 0
for f in glob.glob(out + "/pairs/**/*.json", recursive=True):
    per = {}
    for w in json.load(open(f)).get("windows") or []:
        per.setdefault(w["test"], []).append(w["log_ratio"])
    for v in per.values():
        m = sum(v) / len(v)
        ss += sum((x - m) ** 2 for x in v)
        df += len(v) - 1
q = lambda v: "%.3f-%.3f" % (min(v), st.median(v)) if v else "-"
print("%-7s %4d/%-3d %14s %8s %12s %12s %10s" % (d, kept, kept + rej, q(busy), "%.3f" % st.median(soft) if soft else "-",
      q(cg), q(cl), "%.2f%%" % (100 * (ss / df) ** 0.5) if df else "-"))
PY
done
