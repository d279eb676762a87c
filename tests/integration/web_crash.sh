#!/bin/bash
# Web import, kill -9 (issue 6): a web crawl (small link bulks, so many
# tasks, and a politeness delay, so it lasts) is killed with SIGKILL early,
# late and twice, the server is started again on the same data dir; the
# run completes and the index holds every allowed page exactly once, as
# an uninterrupted crawl does.  A retried crawler task fetches again what
# its lost attempt had marked visited (the visited links' owner is the
# task's input), so no page is lost; no page is requested more often than
# once per attempt.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"

python3 "$SRC/tests/integration/web_site.py" --port-file "$TMP/site.port" \
    --log "$TMP/access.log" --pages 40 &
SITE_PID=$!
trap 'kill $SITE_PID 2>/dev/null; cleanup' EXIT
for _ in $(seq 1 100); do [ -s "$TMP/site.port" ] && break; sleep 0.05; done
SITE="http://127.0.0.1:$(cat "$TMP/site.port")"
import_config "$TMP/config.json" '.jobmanager.leaseSeconds = 5'

define() { # NAME
    local params
    params=$(jq -cn --arg url "$SITE/" --arg inc "^$SITE/" \
        '{dataSource: "webcrash", startUrl: $url, jobToPushTo: "indexUpdate", linksPerBulk: 3,
          filters: {urlPatterns: {include: [$inc]}, maxSize: 1048576},
          politeness: {delayMs: 40, maxConnectionsPerHost: 1}}')
    req POST /smila/jobmanager/jobs/ -H 'Content-Type: application/json' \
        -d "{\"name\": \"$1\", \"workflow\": \"webCrawling\", \"parameters\": $params}"
    [ "$STATUS" = 200 ] || { echo "define $1: $STATUS $(cat "$BODY")" >&2; return 1; }
}
python3 "$SRC/tests/integration/web_site.py" --pages 40 --expected | sed "s|^|$SITE|" | LC_ALL=C sort >"$TMP/want"

# reference: an uninterrupted crawl
start_server --config "$TMP/config.json" --data-dir "$TMP/ref"
define crawl
crawl crawl || fail "reference crawl failed: $(cat "$TMP/crawl.err")"
TASKS=$(jq .tasks.successfulTaskCount "$RUNJSON")
snapshot "$TMP/ref.snap"
ids "$TMP/ref.snap" | LC_ALL=C sort >"$TMP/ref.ids"
diff -q "$TMP/want" "$TMP/ref.ids" >/dev/null && ok "reference crawl: every page once ($(wc -l <"$TMP/want")), $TASKS tasks" ||
    fail "reference crawl differs: $(diff "$TMP/want" "$TMP/ref.ids" | head -c 400)"
stop_server

for point in early late double; do
    D="$TMP/data-$point"
    : >"$TMP/access.log"
    start_server --config "$TMP/config.json" --data-dir "$D"
    define crawl
    start_run crawl
    case $point in
    early) until_tasks crawl "$RUN" 3 ;;
    late) until_tasks crawl "$RUN" $((TASKS * 2 / 3)) ;;
    double) until_tasks crawl "$RUN" $((TASKS / 3)) ;;
    esac
    kill9_restart "$D"
    kills=1
    if [ $point = double ]; then
        until_tasks crawl "$RUN" $((TASKS / 2))
        kill9_restart "$D"
        kills=2
    fi
    if wait_run crawl "$RUN"; then ok "$point: the run SUCCEEDED after the restart"; else
        fail "$point: run state $(jq -r .state "$RUNJSON")"; fi
    snapshot "$TMP/snap-$point"
    ids "$TMP/snap-$point" | LC_ALL=C sort >"$TMP/got-$point"
    if diff "$TMP/want" "$TMP/got-$point" >"$TMP/diff"; then
        ok "$point: every page is indexed exactly once after kill -9 and restart"
    else
        fail "$point: index differs: $(head -c 400 "$TMP/diff")"
    fi
    most=$(awk '$4 != "/robots.txt" && $4 != "/doc.txt" && $4 != "/archive.zip" {print $4}' "$TMP/access.log" | sort | uniq -c | sort -rn | awk 'NR == 1 {print $1}')
    [ "${most:-0}" -le $((kills + 1)) ] && ok "$point: no page requested more than once per attempt (at most $most)" ||
        fail "$point: a page was requested $most times"
    stop_server
done
finish
