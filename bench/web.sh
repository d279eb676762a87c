#!/bin/bash
# bench/web.sh: web crawl benchmark.  Generates a static site of N pages
# (default 20000: a home page, 100 section pages, N pages of about 4 KB of
# text, each linking its section, its neighbours and the home page: cycles
# everywhere), serves it with nginx on 127.0.0.1, and measures in one run:
#   - wget2 --recursive over the site (the baseline, as docs/development.md "Benchmarks" asks:
#     measured in the same run on the same server);
#   - a Sluice crawl job (workflow webCrawling, politeness off: delayMs 0,
#     8 connections per host; extractText on, so each page is parsed once
#     for its links and its text: --no-extract-text measures the default,
#     where the textExtractor parses each page again) from the start
#     request until every page is in the embedded index.
# As docs/performance.md describes: one warm-up run of each, then
# --runs N (default 3) measured runs, wget2 and Sluice alternating (each
# Sluice run a fresh server and data dir); prints every run, the median,
# min and max pages/s of both, the ratio of the medians (issue 6's
# target: >= 0.5) and of each pair, and the server's peak RSS and peak
# anonymous memory.  Not a
# test.  Needs root for apt-get when wget2 or nginx are missing.
#   bench/web.sh [--pages N] [--runs N] [--keep] [--no-extract-text]
#                [--mem-trace FILE]
# --mem-trace FILE: during the last measured Sluice run, every 2 s a line
# "seconds anon_KiB in_use_KiB free_KiB mmap_KiB" (the server's RssAnon
# and the allocator's figures of /metrics) into FILE.
set -euo pipefail

PAGES=20000
RUNS=3
KEEP=0
EXTRACT=true
MEM_TRACE=""
while [ $# -gt 0 ]; do
    case $1 in
    --pages) PAGES=${2:?}; shift 2 ;;
    --runs) RUNS=${2:?}; shift 2 ;;
    --keep) KEEP=1; shift ;;
    --no-extract-text) EXTRACT=false; shift ;;
    --mem-trace) MEM_TRACE=${2:?--mem-trace needs a file}; : >"$MEM_TRACE"; shift 2 ;;
    -h | --help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "web.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
REPO=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$REPO/bench/lib.sh"
SLUICE=${SLUICE:-$REPO/build/sluice}
for p in wget2 nginx; do
    if ! command -v $p >/dev/null; then
        pkg=$p
        [ $p = nginx ] && pkg=nginx-light
        echo "web.sh: installing $pkg" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $pkg >/dev/null
    fi
done
TMP=$(mktemp -d "${TMPDIR:-/tmp}/sluice-web.XXXXXX")
PIDS=""
cleanup() {
    [ -f "$TMP/nginx.pid" ] && kill "$(cat "$TMP/nginx.pid")" 2>/dev/null || true
    for p in $PIDS; do kill "$p" 2>/dev/null || true; done
    if [ $KEEP = 1 ]; then echo "kept: $TMP" >&2; else rm -rf "$TMP"; fi
}
trap cleanup EXIT

# ---- the site
python3 - "$TMP/site" "$PAGES" <<'EOF'
import os, random, sys
root, n = sys.argv[1], int(sys.argv[2])
rnd = random.Random(7)
words = ["".join(rnd.choice("bcdfghklmnprstvz") + rnd.choice("aeiou") for _ in range(rnd.randint(1, 4)))
         for _ in range(5000)]
os.makedirs(root + "/s", exist_ok=True)
os.makedirs(root + "/p", exist_ok=True)
sections = 100
def text(k):
    return " ".join(rnd.choice(words) for _ in range(k))
with open(root + "/index.html", "w") as f:
    f.write("<html><head><title>Home</title></head><body>%s</body></html>"
            % " ".join('<a href="/s/%d.html">s%d</a>' % (s, s) for s in range(sections)))
for s in range(sections):
    with open(root + "/s/%d.html" % s, "w") as f:
        f.write("<html><head><title>Section %d</title></head><body><a href=\"/\">home</a> %s</body></html>"
                % (s, " ".join('<a href="../p/%d.html">%d</a>' % (i, i) for i in range(s, n, sections))))
for i in range(n):
    with open(root + "/p/%d.html" % i, "w") as f:
        f.write("<html><head><title>Page %d</title></head><body><p>%s</p>"
                '<a href="/">home</a> <a href="/s/%d.html">up</a> <a href="%d.html">next</a> '
                '<a href="%d.html#x">prev</a></body></html>'
                % (i, text(600), i % sections, (i + 1) % n, (i - 1) % n))
EOF
TOTAL=$((PAGES + 101))
SIZE=$(du -sm "$TMP/site" | cut -f1)

# ---- nginx
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p "$TMP/nginx/logs"
USER_LINE=""
[ "$(id -u)" = 0 ] && USER_LINE="user root;" # workers must read $TMP
cat >"$TMP/nginx.conf" <<EOF
$USER_LINE
worker_processes 1;
pid $TMP/nginx.pid;
error_log $TMP/nginx/logs/error.log;
events { worker_connections 1024; }
http {
    access_log off;
    types { text/html html; }
    server {
        listen 127.0.0.1:$PORT;
        root $TMP/site;
        location / { index index.html; }
    }
}
EOF
nginx -c "$TMP/nginx.conf" -p "$TMP/nginx"
SITE="http://127.0.0.1:$PORT"
echo "site: $TOTAL pages, $SIZE MiB, nginx $(nginx -v 2>&1 | sed 's/.*\///') on $SITE"
echo "sluice: extractText $EXTRACT"
echo "machine: nproc $(nproc), $(sed -n 's/^model name.*: //p' /proc/cpuinfo | head -1), load $(cut -d' ' -f1-3 /proc/loadavg)"

now() { date +%s.%N; }

# wget2_run: one recursive wget2 into a fresh directory; prints its
# pages/s (files written / seconds) or fails when it missed pages.
wget2_run() {
    local t0 t1 got
    rm -rf "$TMP/wget"
    sync # the previous run's writes are not flushed during this one
    t0=$(now)
    (cd "$TMP" && wget2 --recursive --level=inf --no-parent --quiet --max-threads=8 \
        --directory-prefix=wget "$SITE/" || true)
    t1=$(now)
    got=$(find "$TMP/wget" -type f 2>/dev/null | wc -l)
    if [ "$got" -lt "$TOTAL" ]; then
        echo "web.sh: wget2 fetched $got of $TOTAL pages; nginx errors:" >&2
        tail -3 "$TMP/nginx/logs/error.log" >&2
        return 1
    fi
    echo "scale=1; $got / ($t1 - $t0)" | bc
}

# index_count PORT: sets c to the documentCount of index "default" on the
# server at PORT (left alone when there is no answer), over bash's
# /dev/tcp: no process is started.
index_count() {
    local resp=""
    exec 8<>"/dev/tcp/127.0.0.1/$1" || return 0
    printf 'GET /smila/index/default/ HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&8
    IFS= read -r -d '' -u 8 resp || true
    exec 8>&-
    [[ $resp =~ \"documentCount\":\ *([0-9]+) ]] && c=${BASH_REMATCH[1]}
    return 0
}

# sluice_run N: a fresh server and data dir, the crawl job from the start
# request until every page is in the index; prints pages/s, leaves the
# peak RSS (MiB) in $TMP/rss-N, the peaks of anonymous and file-backed
# memory (KiB, bench_peak_sampler) in $TMP/anon-N and the crawl run's
# JSON in $TMP/crawl-run-N.json (it runs in a subshell).
sluice_run() {
    local n=$1 spid sp b t0 t1 c
    rm -rf "$TMP/data"
    sync
    (cd "$REPO" && exec "$TMP/sluice" serve --config config/sluice.json --listen 127.0.0.1:0 \
        --data-dir "$TMP/data" --log-level info) >"$TMP/sluice.log" 2>&1 &
    spid=$!
    PIDS="$PIDS $spid"
    b=$(bench_base "$TMP/sluice.log" "$spid") || return 1
    sp=${b##*:}
    bench_peak_sampler "$spid" "$TMP/anon-$n" &
    if [ -n "$MEM_TRACE" ] && [ "$n" = "$RUNS" ]; then
        bench_mem_trace "$spid" "$b" "$MEM_TRACE" >/dev/null &
    fi
    jq -n --arg url "$SITE/" --arg inc "^$SITE/" --argjson xt "$EXTRACT" \
        '{name: "benchWeb", workflow: "webCrawling", parameters: {dataSource: "benchweb", startUrl: $url,
          jobToPushTo: "indexUpdate", linksPerBulk: 200, extractText: $xt,
          filters: {urlPatterns: {include: [$inc]}},
          politeness: {delayMs: 0, maxConnectionsPerHost: 8, parallelTransfers: 16, respectRobots: true}}}' |
        curl -sSf -X POST -H 'Content-Type: application/json' --data-binary @- "$b/smila/jobmanager/jobs/" >/dev/null
    t0=$(now)
    curl -sSf -X POST -d '{"mode":"runOnce"}' "$b/smila/jobmanager/jobs/benchWeb/" >/dev/null
    while :; do
        # every 50 ms, without starting a process: a curl and a sleep per
        # poll took about 5% of the two cores being measured
        c=0
        index_count "$sp"
        [ "$c" -ge "$TOTAL" ] && break
        kill -0 "$spid" || { echo "web.sh: the server died" >&2; tail "$TMP/sluice.log" >&2; return 1; }
        read -r -t 0.05 -u 9 || true # a fifo nobody writes: sleeps in bash
    done
    t1=$(now)
    awk '/^VmHWM/ { print int($2 / 1024) }' "/proc/$spid/status" >"$TMP/rss-$n"
    "$TMP/sluice" job status benchWeb --server "$b" --json >"$TMP/crawl-run-$n.json" 2>/dev/null || true
    kill "$spid" 2>/dev/null || true
    wait "$spid" 2>/dev/null || true
    echo "scale=1; $c / ($t1 - $t0)" | bc
}

# stats VALUES...: "median M (min A, max B)"
stats() {
    printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END {
        m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf "median %.0f (min %.0f, max %.0f)", m, v[1], v[NR] }'
}
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

mkfifo "$TMP/never"
exec 9<>"$TMP/never" # index polls wait on it (read -t)
cp "$SLUICE" "$TMP/sluice"
cp "$(dirname "$SLUICE")/sluice-pdf" "$TMP/sluice-pdf" # its PDF converter, found beside it
echo "warm-up: wget2 $(wget2_run) pages/s, sluice $(sluice_run 0) pages/s (not counted)"
W=()
S=()
PEAK=0
for i in $(seq 1 "$RUNS"); do
    w=$(wget2_run)
    s=$(sluice_run "$i")
    r=$(<"$TMP/rss-$i")
    [ "$r" -gt "$PEAK" ] && PEAK=$r
    W+=("$w")
    S+=("$s")
    a=0
    read -r a _ <"$TMP/anon-$i" 2>/dev/null || :
    echo "run $i: wget2 $w pages/s, sluice $s pages/s (peak RSS $r MiB, anonymous $((${a:-0} / 1024)) MiB), ratio $(echo "scale=3; $s / $w" | bc)"
    jq -r '"  crawl run: \(.startTime) - \(.endTime), tasks \(.tasks.successfulTaskCount); busy (s): " + ([.worker | to_entries[] | "\(.key) \(.value.duration // 0 | . * 10 | round / 10)"] | join(", "))' \
        "$TMP/crawl-run-$i.json" || true
done
echo "wget2 --recursive: $(stats "${W[@]}") pages/s over $RUNS runs"
echo "sluice crawl into the index: $(stats "${S[@]}") pages/s over $RUNS runs, peak RSS $PEAK MiB"
echo "ratio of the medians sluice / wget2: $(echo "scale=3; $(median "${S[@]}") / $(median "${W[@]}")" | bc)  (target >= 0.5)"
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
