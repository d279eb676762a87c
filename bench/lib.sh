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

# bench_peak_sampler PID OUT [TRACE]: every 200 ms, the peaks so far of PID's
# RssAnon and RssFile (KiB) into OUT as "anon file", until PID is gone;
# with TRACE, every 5 s a line "seconds anon file in_use free mmap" of the
# current values appended to it: in_use, free and mmap are the allocator's
# live heap in its arenas, their free memory and its own mapped blocks in
# KiB, the last line that the caller's own sampler of bench_malloc
# (import.sh's heap_sampler) wrote into OUT.heap ("- - -" before it has
# one).  Bash builtins but sleep, so that it costs the measured cores next
# to nothing.
bench_peak_sampler() {
    local pid=$1 out=$2 trace=${3:-} k v a f anon=0 file=0 n=0 heap t0=$SECONDS
    local hf=$2.heap # the caller's latest bench_malloc figures
    while :; do
        a=-1 f=0
        {
            while read -r k v _; do
                case $k in RssAnon:) a=$v ;; RssFile:) f=$v ;; esac
            done <"/proc/$pid/status"
        } 2>/dev/null || break
        [ "$a" -ge 0 ] || break
        if [ "$a" -gt "$anon" ] || [ "$f" -gt "$file" ]; then
            [ "$a" -gt "$anon" ] && anon=$a
            [ "$f" -gt "$file" ] && file=$f
            echo "$anon $file" >"$out"
        fi
        if [ -n "$trace" ] && [ $((n % 25)) -eq 0 ]; then
            heap="- - -"
            read -r heap 2>/dev/null <"$hf" || :
            echo "$((SECONDS - t0)) $a $f $heap" >>"$trace"
        fi
        n=$((n + 1))
        sleep 0.2
    done
}
