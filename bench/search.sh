#!/bin/bash
# bench/search.sh: search latency over a query file (default
# bench/search-queries.txt, the query language of docs/index.md; a file
# of the Recoll comparison, bench/compare-queries.txt, gives its Sluice
# column) on an index that bench/import.sh built and kept:
#
#   bench/import.sh --files 100000 --no-peers --full-only --runs 1 --keep
#   bench/search.sh --data /tmp/sluice-import.XXXXXX/sluice-full
#
# Starts the server on that data directory (a copy of nothing: the index is
# only read), runs every query RUNS times (default 5) after a warm-up over
# one keep-alive connection (curl -K), 10 hits each (--limit: the
# dashboard asks for 20), and prints per query
# the hits, the time of its first request and the median and worst time
# of the runs, then p50 and p99 over all query runs against the target
# (p99 under 50 ms).  The first requests are the warm-up, in the file's
# order on a fresh server: the token counts of the ranking (kept per
# shard until the next commit, docs/index.md "Ranking") are not yet kept,
# except those of the queries before it; the runs after it find them.  The time is curl's
# time_total for the request.  Before measuring it waits until the
# index is no longer merging (docs/index.md "Segments"), as it is on a
# server that has been idle for a moment.
#
# Baselines in the same run: GET /smila/ (the smallest request: the HTTP
# floor) and, with --baseline BIN, another Sluice binary (one from before
# the query language) on the queries both read alike (words, phrases,
# prefixes, OR, NOT: lines of letters, digits, spaces, quotes, '*' and
# parentheses), with the ratio of their medians.  Not a test.
#
# usage: bench/search.sh --data DIR [--index NAME] [--runs R] [--limit N]
#                        [--queries FILE] [--baseline BIN]
# Environment: SLUICE (default <repo>/build/sluice), TMPDIR.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
SLUICE=${SLUICE:-$REPO/build/sluice}
DATA=""
INDEX=default
RUNS=5
LIMIT=10
QUERIES=$REPO/bench/search-queries.txt
BASELINE=""
while [ $# -gt 0 ]; do
    case $1 in
    --data) DATA=${2:?}; shift 2 ;;
    --index) INDEX=${2:?}; shift 2 ;;
    --runs) RUNS=${2:?}; shift 2 ;;
    --limit) LIMIT=${2:?}; shift 2 ;;
    --queries) QUERIES=${2:?}; shift 2 ;;
    --baseline) BASELINE=${2:?}; shift 2 ;;
    -h | --help) sed -n '2,32p' "$0"; exit 0 ;;
    *) echo "search.sh: unknown option '$1'" >&2; exit 2 ;;
    esac
done
[ -d "$DATA/index" ] || { echo "search.sh: --data DIR must be a data directory with an index/ (bench/import.sh --keep)" >&2; exit 2; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/sluice-bench-search.XXXXXX")
PID=""
trap '[ -n "$PID" ] && kill "$PID" 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"' EXIT
# a line "sluice-query<TAB>recoll-query" (bench/compare-queries.txt) gives
# its first field; @ROOT@ (that file's corpus folder) is dropped
grep -v '^#' "$QUERIES" | cut -f1 | sed -e '/^[[:space:]]*$/d' -e 's|@ROOT@||g' >"$TMP/queries"

# start BIN: the server on DATA, its base URL in BASE
start() {
    local port
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    "$1" serve --listen "127.0.0.1:$port" --data-dir "$DATA" --log-level warn \
        >"$TMP/server.log" 2>&1 &
    PID=$!
    BASE=http://127.0.0.1:$port
    for _ in $(seq 1 300); do
        curl -fsS "$BASE/smila/" >/dev/null 2>&1 && { settle; return 0; }
        sleep 0.1
    done
    echo "search.sh: the server did not start; its log:" >&2
    cat "$TMP/server.log" >&2
    exit 1
}

# settle: wait until the index's segments are merged (a server idle for
# index.idleMergeMs merges them; one that never does answers no
# "merging"), as a server that has been running for a while has them
settle() {
    for _ in $(seq 1 6000); do
        [ "$(curl -s "$BASE/smila/index/$INDEX" | jq -r '.merging // false')" = false ] && return 0
        sleep 0.1
    done
    echo "search.sh: the index was still merging after 600 s" >&2
}

stop() {
    kill -TERM "$PID" 2>/dev/null || true
    wait "$PID" 2>/dev/null || true
    PID=""
}

# times FILE N: run each line of FILE (a query) N times over one
# connection; prints "query-number seconds" per request
times() {
    # write-out is one for all the URLs: the n-th line is the n-th URL
    printf 'write-out = "%%{time_total} %%{http_code}\\n"\n' >"$TMP/curl.cfg"
    while IFS= read -r q; do
        for _ in $(seq 1 "$2"); do
            printf 'url = "%s/smila/index/%s/search?limit='"$LIMIT"'&q=%s"\noutput = /dev/null\n' \
                "$BASE" "$INDEX" "$(jq -rn --arg q "$q" '$q | @uri')" >>"$TMP/curl.cfg"
        done
    done <"$1"
    curl -s -K "$TMP/curl.cfg" | awk -v r="$2" '{print int((NR - 1) / r) + 1, $0}'
}

# totals FILE: the total hits of each query (one line each)
totals() {
    while IFS= read -r q; do
        curl -s -G "$BASE/smila/index/$INDEX/search" --data-urlencode "q=$q" \
            --data-urlencode limit=1 | jq -r '.total // ("error: " + .error.message)'
    done <"$1"
}

# stats: "median max" in ms of the seconds on stdin
stats() {
    sort -g | awk '{a[NR] = $1 * 1000} END {printf "%.2f %.2f\n", a[int((NR + 1) / 2)], a[NR]}'
}

# pct P: the P-th percentile in ms of the seconds on stdin
pct() {
    sort -g | awk -v p="$1" '{a[NR] = $1 * 1000} END {i = int(NR * p / 100 + 0.999); if (i < 1) i = 1; printf "%.2f", a[i]}'
}

# measure BIN FILE OUT: warm-up, then RUNS runs of FILE's queries into OUT
# ("query seconds status"), and the totals into OUT.totals
measure() {
    start "$1"
    times "$2" 1 >"$3.first"
    times "$2" "$RUNS" >"$3"
    totals "$2" >"$3.totals"
    { echo 'write-out = "%{time_total}\n"'; for _ in $(seq 1 100); do echo "url = \"$BASE/smila/\""; echo "output = /dev/null"; done; } >"$TMP/floor.cfg"
    curl -s -K "$TMP/floor.cfg" >/dev/null
    curl -s -K "$TMP/floor.cfg" >"$3.floor"
    stop
}

echo "bench/search.sh: $(wc -l <"$TMP/queries") queries x $RUNS runs after a warm-up, $LIMIT hits, index '$INDEX' of $DATA, nproc $(nproc), $(date -u +%FT%TZ)"
echo "sluice: $SLUICE"
measure "$SLUICE" "$TMP/queries" "$TMP/new"
docs=$(start "$SLUICE" >/dev/null; curl -s "$BASE/smila/index/$INDEX" | jq -r '.documentCount'; stop)
echo "documents in the index: $docs"
bad=$(awk '$3 != 200' "$TMP/new" | wc -l)
[ "$bad" -eq 0 ] || echo "WARNING: $bad requests did not answer 200"
printf '%-44s %10s %9s %9s %9s\n' query hits "first ms" "p50 ms" "max ms"
n=0
while IFS= read -r q; do
    n=$((n + 1))
    read -r med max < <(awk -v n="$n" '$1 == n {print $2}' "$TMP/new" | stats)
    first=$(awk -v n="$n" '$1 == n {printf "%.2f", $2 * 1000}' "$TMP/new.first")
    printf '%-44s %10s %9s %9s %9s\n' "${q:0:44}" "$(sed -n "${n}p" "$TMP/new.totals")" "$first" "$med" "$max"
done <"$TMP/queries"
p50=$(awk '{print $2}' "$TMP/new" | pct 50)
p99=$(awk '{print $2}' "$TMP/new" | pct 99)
floor=$(pct 50 <"$TMP/new.floor")
echo "all queries: p50 $p50 ms, p99 $p99 ms over $(wc -l <"$TMP/new") requests; GET /smila/ (HTTP floor) p50 $floor ms"
echo "first requests: p50 $(awk '{print $2}' "$TMP/new.first" | pct 50) ms, max $(awk '{print $2}' "$TMP/new.first" | pct 100) ms over $(wc -l <"$TMP/new.first")"
awk -v p="$p99" 'BEGIN {exit !(p < 50)}' && echo "target p99 < 50 ms: PASS" || echo "target p99 < 50 ms: FAIL"

if [ -n "$BASELINE" ]; then
    grep -E '^[A-Za-z0-9 "*()]+$' "$TMP/queries" >"$TMP/common" || true
    echo
    echo "baseline: $BASELINE on the $(wc -l <"$TMP/common") queries both read alike"
    measure "$SLUICE" "$TMP/common" "$TMP/cn"
    measure "$BASELINE" "$TMP/common" "$TMP/cb"
    printf '%-36s %10s %10s %9s %9s %7s\n' query hits "base hits" "p50 ms" "base ms" ratio
    n=0
    while IFS= read -r q; do
        n=$((n + 1))
        read -r a _ < <(awk -v n="$n" '$1 == n {print $2}' "$TMP/cn" | stats)
        read -r b _ < <(awk -v n="$n" '$1 == n {print $2}' "$TMP/cb" | stats)
        printf '%-36s %10s %10s %9s %9s %6.2fx\n' "${q:0:36}" "$(sed -n "${n}p" "$TMP/cn.totals")" \
            "$(sed -n "${n}p" "$TMP/cb.totals")" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN {print (b > 0 ? a / b : 0)}')"
    done <"$TMP/common"
    # only the queries both answer alike (same hits) count in the summary
    paste "$TMP/cn.totals" "$TMP/cb.totals" | awk -F'\t' '$1 == $2 {print NR}' >"$TMP/same"
    same() { awk 'NR == FNR {k[$1] = 1; next} k[$1] {print $2}' "$TMP/same" "$1"; }
    echo "over the $(wc -l <"$TMP/same") queries with the same hits: p50 $(same "$TMP/cn" | pct 50) ms against $(same "$TMP/cb" | pct 50) ms, p99 $(same "$TMP/cn" | pct 99) against $(same "$TMP/cb" | pct 99) ms"
fi
