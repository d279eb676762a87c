#!/bin/bash
# GET /metrics against the real server during a real file import:
# - the Prometheus text format 0.0.4 passes `promtool check metrics` on
#   scrapes taken while the import runs; OpenMetrics when asked (content
#   type, "# EOF" last);
# - the families an operator needs are there: tasks per worker, job and
#   workflow runs, worker counters, HTTP requests by route pattern with a
#   latency histogram, the bulkbuilder's backlog, index documents and
#   bytes, delta entries per shard and per source, LMDB map use, process_*;
#   no label holds a file path or a run id;
# - a real Prometheus (Debian's) started here on 127.0.0.1 scrapes the
#   server every second (it asks for OpenMetrics), finds the target up, and
#   a PromQL query through its HTTP API sees the import's pushed-records
#   counter rise.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"

command -v promtool >/dev/null && command -v prometheus >/dev/null ||
    skip "promtool and prometheus (Debian package prometheus) are not installed"

ROOT="$TMP/tree"
for d in $(seq 1 20); do
    mkdir -p "$ROOT/d$d"
    for f in $(seq 1 100); do echo "document $d $f alpha bravo" >"$ROOT/d$d/f$f.txt"; done
done

import_config "$TMP/config.json"
start_server --config "$TMP/config.json" --data-dir "$TMP/data"
PORT=${BASE##*:}

# a real Prometheus scraping the server every second
PPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$TMP/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: sluice
    static_configs:
      - targets: ["127.0.0.1:$PORT"]
YML
prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/prom" \
    --web.listen-address="127.0.0.1:$PPORT" >"$TMP/prometheus.log" 2>&1 &
PROM_PID=$!
trap 'rc=$?; kill $PROM_PID 2>/dev/null || true; wait $PROM_PID 2>/dev/null || true; cleanup $rc' EXIT
PROM="http://127.0.0.1:$PPORT"
# promql QUERY: the first value of an instant query, or "none"
promql() {
    curl -sS -G "$PROM/api/v1/query" --data-urlencode "query=$1" |
        jq -r '.data.result[0].value[1] // "none"'
}
up=none
for i in $(seq 1 150); do
    up=$(promql 'up{job="sluice"}' 2>/dev/null || echo none)
    [ "$up" = 1 ] && break
    sleep 0.2
done
[ "$up" = 1 ] && ok "Prometheus scrapes the server: up is 1" ||
    { fail "up{job=\"sluice\"} is $up"; tail -5 "$TMP/prometheus.log"; }
health=$(curl -sS "$PROM/api/v1/targets" | jq -r '.data.activeTargets[0] | "\(.health) \(.lastError)"')
[ "$health" = "up " ] && ok "the target is healthy, no scrape error" || fail "target: $health"
before=$(promql 'sum(sluice_worker_items_total{worker="updatePusher",counter="records.pushed"})')

define_crawl files "$ROOT" fs
"$SLUICE" job start files --server "$BASE" >"$TMP/run.id"
RUN=$(cat "$TMP/run.id")
n=0 checked=0 bad=0
while :; do
    state=$(curl -sS "$BASE/smila/jobmanager/jobs/files/$RUN/" | jq -r .state)
    curl -sS -o "$TMP/scrape.$n" "$BASE/metrics"
    if [ "$state" = RUNNING ] || [ "$state" = FINISHING ]; then
        checked=$((checked + 1))
        promtool check metrics <"$TMP/scrape.$n" >"$TMP/promtool.out" 2>&1 || {
            bad=$((bad + 1))
            cp "$TMP/scrape.$n" "$TMP/scrape.bad"
        }
    fi
    case $state in SUCCEEDED | FAILED | CANCELED) break ;; esac
    n=$((n + 1))
    [ $n -lt 3000 ] || break
done
[ "$state" = SUCCEEDED ] && ok "the import SUCCEEDED" || fail "import ended $state"
[ "$checked" -ge 1 ] && [ "$bad" = 0 ] &&
    ok "promtool check metrics passes on the $checked scrapes taken during the import" ||
    fail "promtool: $checked checked, $bad bad: $(cat "$TMP/promtool.out")"

# the processing job indexes after the crawl run ended (later under ASan)
wait_indexed && ok "the processing job indexed the import" || fail "the import was not indexed"
req GET /metrics
expect_status 200 "GET /metrics"
grep -qi '^Content-Type: text/plain; version=0.0.4; charset=utf-8' "$HEADERS" &&
    ok "text format 0.0.4 by default" || fail "headers: $(cat "$HEADERS")"
M="$BODY"
has() { grep -qE "$1" "$M" && ok "$2" || fail "$2: no line matches $1"; }
has '^# TYPE sluice_tasks_finished_total counter$' "tasks finished: a counter named _total"
has '^sluice_tasks_finished_total\{worker="fileCrawler",result="successful"\} [1-9]' "tasks finished by worker and result"
has '^sluice_tasks_taken_total\{worker="updatePusher"\} [1-9]' "tasks taken per worker"
has '^sluice_tasks_todo\{worker="updatePusher"\} 0$' "tasks todo per worker"
has '^sluice_tasks_retried_total\{worker="fileFetcher",reason="error"\} 0$' "tasks retried by reason"
has '^sluice_job_runs_ended_total\{state="SUCCEEDED"\} [1-9]' "job runs ended by state"
has '^sluice_workflow_runs_ended_total\{result="successful"\} [1-9]' "workflow runs ended by result"
has '^sluice_worker_items_total\{worker="updatePusher",counter="records.pushed"\} 2000$' \
    "the pushed records: 2000, one per file"
has '^sluice_worker_bytes_total\{worker="fileFetcher",counter="files.bytes"\} [1-9]' "byte counters in _bytes_total"
has '^sluice_worker_seconds_total\{worker="fileCrawler",counter="duration"\} ' "durations in _seconds_total"
has '^sluice_http_requests_total\{route="/smila/jobmanager/jobs/:name/:run",method="GET",status="200"\} [1-9]' \
    "HTTP requests by route pattern, method and status"
has '^sluice_http_requests_total\{route="/smila/jobmanager/jobs/:name",method="POST",status="200"\} 1$' \
    "the job start counted under its route pattern"
has '^sluice_http_request_duration_seconds_bucket\{route="/metrics",method="GET",le="\+Inf"\} [1-9]' \
    "a latency histogram per route"
has '^sluice_bulkbuilder_records_accepted_total\{job="indexUpdate"\} ' "the bulkbuilder per job"
has '^sluice_index_documents\{index="default"\} 2000$' "documents per index: 2000"
has '^sluice_index_size_bytes\{index="default"\} [1-9]' "bytes per index"
has '^sluice_lmdb_map_used_bytes\{env="jobmanager",shard=""\} [1-9]' "the jobmanager's LMDB map in use"
has '^sluice_lmdb_map_size_bytes\{env="delta",shard="0"\} [1-9]' "each delta shard's map size"
entries=$(awk '/^sluice_delta_entries\{/ { n += $2 } END { print n + 0 }' "$M")
[ "$entries" = 2000 ] && ok "the delta entries over the shards: 2000" || fail "delta entries: $entries"
per=none
for i in $(seq 1 100); do # counted in the background: a later scrape has it
    per=$(curl -sS "$BASE/metrics" | sed -n 's/^sluice_delta_source_entries{source="fs"} //p')
    [ "$per" = 2000 ] && break
    sleep 0.2
done
[ "$per" = 2000 ] && ok "the delta entries of source fs: 2000" || fail "source fs entries: $per"
has '^process_resident_memory_bytes [1-9]' "process_resident_memory_bytes"
has '^process_cpu_seconds_total [0-9]' "process_cpu_seconds_total"
has '^process_open_fds [1-9]' "process_open_fds"
has '^sluice_resident_memory_bytes\{kind="anon"\} [1-9]' "resident memory: anonymous"
case "$(ldd "$SLUICE")" in
*libasan* | *libtsan*) # a sanitizer's allocator replaces glibc's: mallinfo2 knows nothing of it
    ! grep -q '^sluice_malloc_bytes' "$M" && ok "no allocator figures under a sanitizer's allocator" ||
        fail "allocator figures under a sanitizer's allocator: $(grep '^sluice_malloc_bytes' "$M")" ;;
*)
    has '^sluice_malloc_bytes\{kind="in_use"\} [1-9]' "the allocator's live heap"
    has '^sluice_malloc_bytes\{kind="mmap"\} [0-9]' "the allocator's own mappings"
    has '^sluice_malloc_bytes\{kind="free"\} [0-9]' "the allocator's free memory" ;;
esac
! grep -q -e "$ROOT" -e "$RUN" "$M" && ok "no file path and no run id in any label" ||
    fail "a label holds a path or a run id: $(grep -e "$ROOT" -e "$RUN" "$M" | head -3)"

req GET /metrics -H 'Accept: application/openmetrics-text;version=1.0.0,text/plain;q=0.5'
grep -qi '^Content-Type: application/openmetrics-text; version=1.0.0' "$HEADERS" &&
    [ "$(tail -1 "$BODY")" = "# EOF" ] && grep -q '^# TYPE sluice_tasks_finished counter$' "$BODY" &&
    grep -q '^sluice_build_info{version=' "$BODY" &&
    ok "OpenMetrics when asked: its content type, counter families without _total, # EOF last" ||
    fail "OpenMetrics: $(head -3 "$BODY"; tail -1 "$BODY")"

after=none
for i in $(seq 1 100); do
    after=$(promql 'sum(sluice_worker_items_total{worker="updatePusher",counter="records.pushed"})')
    [ "$after" = 2000 ] && break
    sleep 0.2
done
[ "$after" = 2000 ] && ok "PromQL sees the pushed records rise: $before -> $after" ||
    fail "PromQL records.pushed: $before -> $after"
# two scrapes of the series at least, a second apart
for i in $(seq 1 50); do
    rate=$(promql 'sum(increase(sluice_http_requests_total{route="/metrics"}[1m])) > 0')
    [ "$rate" != none ] && break
    sleep 0.2
done
[ "$rate" != none ] && ok "PromQL: the scrapes themselves counted ($rate in the last minute)" ||
    fail "no increase of the /metrics requests"

stop_server
finish
