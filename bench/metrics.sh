#!/bin/bash
# bench/metrics.sh: the cost of a GET /metrics scrape.  Starts the server
# with the repository's configuration, defines JOBS file-crawl jobs (default
# 100) over small generated trees and runs each once, so that every worker
# has counters, every job a bulkbuilder entry and the index documents; then
# times SCRAPES scrapes of /metrics (after a warm-up) against, in the same
# run, the same number of GET /smila/ (the smallest JSON answer: the cost
# of a request itself) and GET /smila/jobmanager/jobs/ (a listing of the
# jobs).  Prints median, p90, p99 and max per endpoint, the ratios, the
# scrape's size and series, and the target (a scrape under 10 ms).  Not a
# test.  Environment: SLUICE (default <repo>/build/sluice), TMPDIR.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$REPO/bench/lib.sh"
SLUICE=${SLUICE:-$REPO/build/sluice}
JOBS=100
SCRAPES=300
while [ $# -gt 0 ]; do
    case $1 in
    --jobs) JOBS=${2:?}; shift 2 ;;
    --scrapes) SCRAPES=${2:?}; shift 2 ;;
    -h | --help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "metrics.sh: unknown option '$1'" >&2; exit 2 ;;
    esac
done

TMP=$(mktemp -d "${TMPDIR:-/tmp}/sluice-bench-metrics.XXXXXX")
PID=""
trap '[ -n "$PID" ] && kill "$PID" 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"' EXIT
cp "$SLUICE" "$TMP/sluice"

echo "machine: $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
echo "commit: $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)"
(cd "$REPO" && exec "$TMP/sluice" serve --config config/sluice.json --listen 127.0.0.1:0 \
    --data-dir "$TMP/data" --log-level info) >"$TMP/log" 2>&1 &
PID=$!
BASE=$(bench_base "$TMP/log" "$PID")

echo "defining and running $JOBS crawl jobs (10 files each)..."
for j in $(seq 1 "$JOBS"); do
    mkdir -p "$TMP/tree/$j"
    for f in $(seq 1 10); do echo "job $j file $f" >"$TMP/tree/$j/f$f.txt"; done
    jq -n --arg n "job$j" --arg r "$TMP/tree/$j" '{name: $n, workflow: "fileCrawling",
        parameters: {dataSource: $n, rootFolder: $r, jobToPushTo: "indexUpdate"}}' |
        curl -sSf -o /dev/null -X POST -H 'Content-Type: application/json' --data-binary @- "$BASE/smila/jobmanager/jobs/"
    "$TMP/sluice" job start "job$j" --wait --server "$BASE" >/dev/null 2>&1
done

# times URL: SCRAPES request times in ms, one per line (one connection
# each, as Prometheus keeps none open between scrapes of 1 s or more)
times() {
    curl -s -o /dev/null "$1"
    for _ in $(seq 1 "$SCRAPES"); do
        curl -s -o /dev/null -w '%{time_total}\n' "$1"
    done | awk '{ printf "%.3f\n", $1 * 1000 }' | sort -n
}
pct() { # FILE P: the P-th percentile
    awk -v p="$2" '{ v[NR] = $1 } END { i = int(NR * p / 100 + 0.5); if (i < 1) i = 1; if (i > NR) i = NR; print v[i] }' "$1"
}
times "$BASE/metrics" >"$TMP/metrics.ms"
times "$BASE/smila/" >"$TMP/system.ms"
times "$BASE/smila/jobmanager/jobs/" >"$TMP/jobs.ms"
curl -s -o "$TMP/scrape" "$BASE/metrics"
series=$(grep -vc '^#' "$TMP/scrape")

echo
echo "$SCRAPES requests each, after a warm-up; ms from curl's time_total (connect included):"
printf '  %-32s %8s %8s %8s %8s\n' endpoint median p90 p99 max
for e in metrics system jobs; do
    case $e in metrics) u=/metrics ;; system) u=/smila/ ;; jobs) u=/smila/jobmanager/jobs/ ;; esac
    printf '  %-32s %8s %8s %8s %8s\n' "GET $u" "$(pct "$TMP/$e.ms" 50)" "$(pct "$TMP/$e.ms" 90)" \
        "$(pct "$TMP/$e.ms" 99)" "$(tail -1 "$TMP/$e.ms")"
done
m50=$(pct "$TMP/metrics.ms" 50)
m99=$(pct "$TMP/metrics.ms" 99)
echo "  scrape: $(wc -c <"$TMP/scrape") bytes, $series series, $JOBS jobs"
awk -v a="$m50" -v b="$(pct "$TMP/system.ms" 50)" -v c="$(pct "$TMP/jobs.ms" 50)" \
    'BEGIN { printf "  median ratios: /metrics / /smila/ = %.2fx, /metrics / jobs listing = %.2fx\n", a / b, a / c }'
awk -v v="$m99" 'BEGIN { printf "  %-50s %8s ms  %s\n", "p99 of a scrape with the jobs above < 10 ms", v, (v < 10 ? "PASS" : "MISS") }'
echo "peak RSS of the server: $(sed -n 's/^VmHWM:[[:space:]]*//p' "/proc/$PID/status")"
