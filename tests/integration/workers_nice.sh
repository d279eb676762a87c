#!/bin/bash
# workers.nice: the niceness of worker types' threads (docs/configuration.md).
# 1. by default the webCrawler's threads run at nice 5, the others at 0;
# 2. "indexWriter=3,webCrawler=0" sets those two;
# 3. "" leaves every thread at 0;
# 4. a malformed value stops the server at start with a message naming
#    workers.nice;
# 5. the thread that calls malloc_trim (sl-trim, docs/operations.md
#    "Memory allocator") runs by default, and not when GLIBC_TUNABLES names
#    a glibc.malloc setting (the allocator is then left alone).
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"

# nice_of NAME: the niceness of the server's threads named NAME, one per
# line, sorted and unique (field 19 of /proc/PID/task/TID/stat)
nice_of() {
    local t
    for t in /proc/"$SERVER_PID"/task/*; do
        if [ "$(cat "$t/comm")" = "$1" ]; then
            sed 's/.*) //' "$t/stat" | awk '{ print $17 }'
        fi
    done | sort -u | paste -sd' '
}

# expect_nice DESCRIPTION NAME=WANT...: for each NAME, all its threads at
# WANT (the threads may still be starting: looked at for 2 s at most)
expect_nice() {
    local what=$1 pair got bad i
    shift
    for i in $(seq 1 40); do
        bad=""
        for pair in "$@"; do
            got=$(nice_of "${pair%%=*}")
            [ "$got" = "${pair#*=}" ] || bad="$bad ${pair%%=*}: '$got' (want ${pair#*=})"
        done
        [ -z "$bad" ] && break
        sleep 0.05
    done
    [ -z "$bad" ] && ok "$what" || fail "$what:$bad"
}

# ---- 1. the default
write_config "$TMP/c1.json"
start_server --config "$TMP/c1.json" --data-dir "$TMP/d1"
expect_nice "by default the webCrawler's threads run at nice 5, the others at 0" \
    webCrawler=5 indexWriter=0 textExtractor=0 updatePusher=0
stop_server

# ---- 2. set for two types
write_config "$TMP/c2.json" '.workers = {"nice": "indexWriter=3,webCrawler=0"}'
start_server --config "$TMP/c2.json" --data-dir "$TMP/d2"
expect_nice "\"indexWriter=3,webCrawler=0\" sets those two" \
    indexWriter=3 webCrawler=0 deltaChecker=0
stop_server

# ---- 3. none
write_config "$TMP/c3.json" '.workers = {"nice": ""}'
start_server --config "$TMP/c3.json" --data-dir "$TMP/d3"
expect_nice "an empty workers.nice leaves every thread at 0" webCrawler=0 indexWriter=0
stop_server

# ---- 4. malformed
for bad in "webCrawler=high" "webCrawler=20" "webCrawler" "=5"; do
    write_config "$TMP/c4.json" ".workers = {\"nice\": \"$bad\"}"
    if "$SLUICE" serve --config "$TMP/c4.json" --data-dir "$TMP/d4" >"$TMP/out4" 2>&1; then
        fail "workers.nice \"$bad\" was accepted"
    elif grep -q "workers.nice" "$TMP/out4"; then
        ok "workers.nice \"$bad\" stops the server, naming workers.nice"
    else
        fail "workers.nice \"$bad\": $(tail -3 "$TMP/out4")"
    fi
done

# ---- 5. the malloc trimming thread
start_server --config "$TMP/c1.json" --data-dir "$TMP/d5"
expect_nice "the sl-trim thread runs by default" sl-trim=0
stop_server
GLIBC_TUNABLES=glibc.malloc.trim_threshold=1048576 \
    start_server --config "$TMP/c1.json" --data-dir "$TMP/d6"
sleep 0.5
[ -z "$(nice_of sl-trim)" ] && [ -n "$(nice_of indexWriter)" ] &&
    ok "no sl-trim thread with a glibc.malloc tunable" ||
    fail "sl-trim with GLIBC_TUNABLES: '$(nice_of sl-trim)'"
stop_server

finish
