# shellcheck shell=bash
# bench/lib.sh: what the benchmark scripts share.  Sourced (". lib.sh"),
# never run; it defines functions only and expects bash with set -e.

# bench_base LOG PID: wait for the "sluice serve" process PID to write
# "listening on http://HOST:PORT/" into LOG, and print its base URL
# (http://127.0.0.1:PORT: every bench listens on 127.0.0.1:0).  Gives up
# after 30 s or when PID is gone, with LOG on stderr, and returns 1, so
# that "B=$(bench_base ...)" ends a script under set -e.
bench_base() {
    local log=$1 pid=$2 port=""
    for _ in $(seq 1 600); do
        port=$(sed -n 's|.*listening on http://[^:]*:\([0-9]*\)/.*|\1|p' "$log" 2>/dev/null |
            head -1) || :
        [ -n "$port" ] && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    if [ -z "$port" ]; then
        echo "${0##*/}: sluice serve did not start; its log:" >&2
        cat "$log" >&2
        return 1
    fi
    echo "http://127.0.0.1:$port"
}

# bench_crawl_job BASE NAME ROOT: define the fileCrawling job NAME over the
# folder ROOT, pushing into the indexUpdate job (data source "bench").
bench_crawl_job() {
    jq -n --arg name "$2" --arg root "$3" '{name: $name, workflow: "fileCrawling",
        parameters: {dataSource: "bench", rootFolder: $root, jobToPushTo: "indexUpdate"}}' |
        curl -sSf -X POST -H 'Content-Type: application/json' --data-binary @- \
            "$1/smila/jobmanager/jobs/" >/dev/null
}

# bench_malloc BASE: the allocator's figures of the server at BASE from
# its /metrics (sluice_malloc_bytes), as "in_use free mmap" in KiB; "-"
# for each one the server does not give (a sanitizer build) and "- - -"
# when the server does not answer within 4 s.
bench_malloc() {
    { curl -sS --max-time 4 "$1/metrics" 2>/dev/null || :; } |
        awk '/^sluice_malloc_bytes\{kind="in_use"\}/ { u = int($2 / 1024) }
             /^sluice_malloc_bytes\{kind="free"\}/ { f = int($2 / 1024) }
             /^sluice_malloc_bytes\{kind="mmap"\}/ { m = int($2 / 1024) }
             END { print (u == "" ? "-" : u), (f == "" ? "-" : f), (m == "" ? "-" : m) }'
}

# bench_mem_trace PID BASE OUT [SECS]: every SECS (default 2) seconds
# until PID is gone, append to OUT "seconds anon_KiB in_use_KiB free_KiB
# mmap_KiB": the server's RssAnon and its allocator's figures
# (bench_malloc).  Run it in the background.
bench_mem_trace() {
    local pid=$1 base=$2 out=$3 secs=${4:-2} t0=$SECONDS anon heap
    while kill -0 "$pid" 2>/dev/null; do
        heap=$(bench_malloc "$base")
        anon=$(awk '$1 == "RssAnon:" { print $2 }' "/proc/$pid/status" 2>/dev/null) || :
        [ -z "$anon" ] || echo "$((SECONDS - t0)) $anon $heap" >>"$out"
        sleep "$secs"
    done
}
