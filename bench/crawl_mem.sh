#!/bin/bash
# bench/crawl_mem.sh: the server's memory over a file crawl of TREE for a
# fixed time, to compare allocator settings or binaries at a size where a
# whole import takes too long (docs/performance.md, "A million files: what
# the anonymous memory is").  Starts `sluice serve` on a fresh data dir
# (the page cache dropped first when run as root), submits a runOnce crawl
# of TREE into indexUpdate, and every 5 s appends to OUT a line
# "seconds anon_KiB in_use_KiB free_KiB mmap_KiB" (RssAnon of the server;
# the allocator's figures from /metrics, bench/lib.sh's bench_mem_trace).
# After SECONDS it
# prints the server's CPU seconds and the documents indexed so far, a
# summary of OUT per 120 s, and stops the server.
# Usage: bench/crawl_mem.sh TREE SECONDS OUT
# Environment: SLUICE (default <repo>/build/sluice); the server's
# environment passes through (MALLOC_ARENA_MAX, GLIBC_TUNABLES).  The
# server listens on a free port of 127.0.0.1.  A benchmark, not a test.
set -euo pipefail

[ $# -eq 3 ] || { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2; }
TREE=$1 SECONDS_MAX=$2 OUT=$3
REPO=$(cd "$(dirname "$0")/.." && pwd)
SLUICE=${SLUICE:-$REPO/build/sluice}
# shellcheck source=bench/lib.sh
. "$REPO/bench/lib.sh"
[ -d "$TREE" ] || { echo "crawl_mem.sh: $TREE is not a directory" >&2; exit 2; }
[ -x "$SLUICE" ] || { echo "crawl_mem.sh: $SLUICE not found" >&2; exit 2; }
TREE=$(cd "$TREE" && pwd)

D=$(mktemp -d "${TMPDIR:-/tmp}/sluice-crawlmem.XXXXXX")
pid=""
tracer=""
cleanup() {
    [ -z "$tracer" ] || kill "$tracer" 2>/dev/null || :
    [ -z "$pid" ] || kill "$pid" 2>/dev/null || :
    [ -z "$pid" ] || wait "$pid" 2>/dev/null || :
    rm -rf "$D"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
jq --arg repo "$REPO" '.jobmanager.configDir = $repo + "/config" |
    .jobmanager.workflowsDir = $repo + "/workflows"' "$REPO/config/sluice.json" >"$D/cfg.json"
if [ "$(id -u)" -eq 0 ]; then
    sync
    echo 3 >/proc/sys/vm/drop_caches
fi
(cd "$REPO" && exec "$SLUICE" serve --config "$D/cfg.json" --listen 127.0.0.1:0 \
    --data-dir "$D/data" --log-level info) >"$D/log" 2>&1 &
pid=$!
BASE=$(bench_base "$D/log" "$pid")
bench_crawl_job "$BASE" benchCrawl "$TREE"
curl -sSf -X POST -H 'Content-Type: application/json' -d '{"mode":"runOnce"}' \
    "$BASE/smila/jobmanager/jobs/benchCrawl/" >/dev/null

t0=$(date +%s)
t=0
: >"$OUT"
bench_mem_trace "$pid" "$BASE" "$OUT" 5 &
tracer=$!
while [ "$t" -lt "$SECONDS_MAX" ]; do
    if ! kill -0 "$pid" 2>/dev/null; then
        echo "crawl_mem.sh: the server died; the end of its log:" >&2
        tail -20 "$D/log" >&2
        exit 1
    fi
    sleep 1
    t=$(($(date +%s) - t0))
done
kill "$tracer" 2>/dev/null || :
wait "$tracer" 2>/dev/null || :
tracer=""
cpu=$(awk -v hz="$(getconf CLK_TCK)" '{ printf "%.1f", ($14 + $15) / hz }' "/proc/$pid/stat")
docs=$(curl -sS "$BASE/metrics" | awk '/^sluice_index_documents\{index="default"\}/ { print $2 }')
echo "crawl_mem.sh: after $t s: server CPU $cpu s, $docs documents indexed"
echo "per 120 s (MiB): anon avg (max), in_use avg (max), free avg"
awk '{ b = int($1 / 120); if (b > last) last = b
        n[b]++; a[b] += $2; if ($2 > ma[b]) ma[b] = $2
        if ($3 != "-") { nu[b]++; u[b] += $3; f[b] += $4; if ($3 > mu[b]) mu[b] = $3 } }
     END { for (i = 0; i <= last; i++) {
        if (!(i in n)) continue
        printf "  %4d-%4d s: anon %3.0f (%3.0f)", i * 120, i * 120 + 120, a[i] / n[i] / 1024, ma[i] / 1024
        if (i in nu) printf "  in_use %3.0f (%3.0f)  free %3.0f", u[i] / nu[i] / 1024, mu[i] / 1024, f[i] / nu[i] / 1024
        printf "\n" } }' "$OUT"
