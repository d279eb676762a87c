#!/bin/bash
# bench/tasks-workers.sh: task finishes per second through the worker
# runtime, with the no-op test worker running in-process (internal) and in
# one `sluice-test worker` process over REST (external), for both
# durability settings.  Baseline in the same run: build/bench-tasks, which
# takes and finishes the same tasks by calling the jobmanager API directly.
# The time of a run is the server's own endTime - startTime.
#
# usage: bench/tasks-workers.sh [BUILD_DIR] [TASKS] [RUNS]
set -euo pipefail
BUILD=${1:-build}
N=${2:-20000}
RUNS=${3:-3}
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/lib.sh
. "$HERE/lib.sh"
BIN=$(cd "$BUILD" && pwd)/sluice-test
TMP=$(mktemp -d "${TMPDIR:-/tmp}/sluice-bench.XXXXXX")
SERVER=""
WORKER=""
cleanup() {
    [ -n "$WORKER" ] && kill -TERM "$WORKER" 2>/dev/null || true
    [ -n "$SERVER" ] && kill -TERM "$SERVER" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$TMP"
}
trap cleanup EXIT

# one_run DURABILITY MODE TASKS: prints finishes per second.
one_run() {
    local dur=$1 mode=$2 n=$3 data="$TMP/data" base run state ms
    rm -rf "$data"
    mkdir -p "$data/store/in/src"
    (cd "$data/store/in/src" && seq -f 'o%08.0f' 1 "$n" | xargs touch)
    jq -n --arg d "$dur" --arg cd "$HERE/tasks-workers" --arg ext \
        "$([ "$mode" = external ] && echo testNoop || echo '')" \
        '{listen: "127.0.0.1:0", durability: $d, log: {level: "warn"},
          jobmanager: {configDir: $cd, workflowsDir: ($cd + "/workflows")},
          workers: {threads: 2, external: $ext}}' >"$TMP/config.json"
    "$BIN" serve --config "$TMP/config.json" --data-dir "$data" --log-level info \
        2>"$TMP/server.log" &
    SERVER=$!
    base=$(bench_base "$TMP/server.log" "$SERVER") || { kill "$SERVER"; exit 1; }
    run=$(curl -sS -X POST "$base/smila/jobmanager/jobs/noopJob/" | jq -r .jobId)
    if [ "$mode" = external ]; then
        "$BIN" worker --server "$base" --worker testNoop --threads 2 2>"$TMP/worker.log" &
        WORKER=$!
    fi
    while :; do
        state=$(curl -sS "$base/smila/jobmanager/jobs/noopJob/$run/" | tee "$TMP/run.json" | jq -r .state)
        case "$state" in SUCCEEDED) break ;; FAILED|CANCELED) echo "run $state" >&2; exit 1 ;; esac
        sleep 0.2
    done
    if [ -n "$WORKER" ]; then kill -TERM "$WORKER"; wait "$WORKER" || true; WORKER=""; fi
    kill -TERM "$SERVER"; wait "$SERVER" || true; SERVER=""
    ms=$(jq -r 'def ms: (sub("\\.[0-9]+Z$"; "Z") | fromdateiso8601) * 1000
                        + (capture("\\.(?<m>[0-9]+)Z$").m | tonumber);
                (.endTime | ms) - (.startTime | ms)' "$TMP/run.json")
    jq -n --argjson n "$n" --argjson ms "$ms" '$n * 1000 / $ms | floor'
}

stats() { sort -n | awk '{a[NR]=$1} END {printf "median %6d  min %6d  max %6d", a[int((NR+1)/2)], a[1], a[NR]}'; }

echo "bench/tasks-workers: $N no-op tasks, 2 worker threads, $RUNS runs each after a warm-up, nproc $(nproc), warm page cache"
for dur in process fsync; do
    for mode in internal external; do
        one_run "$dur" "$mode" $((N / 10)) >/dev/null
        res=$(for _ in $(seq 1 "$RUNS"); do one_run "$dur" "$mode" "$N"; done | stats)
        echo "durability $dur  $mode worker  finishes/s $res"
    done
done
echo "baseline (same run): build/bench-tasks, the jobmanager API called directly:"
"$BUILD/bench-tasks" --tasks "$N" --runs "$RUNS" | sed -n '2,3p'
