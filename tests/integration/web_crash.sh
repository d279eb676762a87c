#!/bin/bash
# Web import, kill -9 (issue 6): a web crawl (small link bulks, so many
# tasks, and a politeness delay, so it lasts) is killed with SIGKILL early,
# late and twice, the server is started again on the same data dir; the
# run completes and the index holds every allowed page exactly once, as
# an uninterrupted crawl does.  A retried crawler task fetches and writes
# again what its lost attempt had marked visited (the visited links' owner
# is the task's input), so no page is lost; no page is requested more
# often than once per attempt.  Last, a kill while the start task waits
# after it marked and wrote its page links, before they were committed
# (SLUICE_TEST_DELAY webCrawler.linksWritten): its retry writes them again.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"
. "$(dirname "$0")/web_lib.sh"

start_site site --pages 40
import_config "$TMP/config.json" '.jobmanager.leaseSeconds = 5'

define() { # NAME: link bulks of 3, politeness delay 40 ms, one connection
    define_web "$1" "$SITE" webcrash '.linksPerBulk = 3 | .filters.maxSize = 1048576 |
        .politeness = {delayMs: 40, maxConnectionsPerHost: 1}'
}
site_expected "$SITE" --pages 40 >"$TMP/want"

# reference: an uninterrupted crawl
start_server --config "$TMP/config.json" --data-dir "$TMP/ref"
define crawl
crawl crawl || fail "reference crawl failed: $(cat "$TMP/crawl.err")"
TASKS=$(jq .tasks.successfulTaskCount "$RUNJSON")
expect_index "$TMP/want" "reference crawl: every page once ($(wc -l <"$TMP/want")), $TASKS tasks"
stop_server

for point in early late double; do
    D="$TMP/data-$point"
    : >"$SITE_LOG"
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
    expect_index "$TMP/want" "$point: every page is indexed exactly once after kill -9 and restart"
    most=$(awk '$4 != "/robots.txt" && $4 != "/doc.txt" && $4 != "/archive.zip" {print $4}' "$SITE_LOG" | sort | uniq -c | sort -rn | awk 'NR == 1 {print $1}')
    [ "${most:-0}" -le $((kills + 1)) ] && ok "$point: no page requested more than once per attempt (at most $most)" ||
        fail "$point: a page was requested $most times"
    stop_server
done

# ---- killed after the page links were marked visited, before the commit
D="$TMP/data-written"
: >"$SITE_LOG"
export SLUICE_TEST_DELAY=webCrawler.linksWritten=4000
start_server --config "$TMP/config.json" --data-dir "$D"
unset SLUICE_TEST_DELAY
define crawl
start_run crawl
marked=0
for _ in $(seq 1 100); do
    marked=$(curl -sS "$BASE/smila/importing/visitedlinks/webcrash/" | jq -r '.entryCount // 0')
    [ "$marked" -ge 3 ] && break
    sleep 0.1
done
done_tasks=$(curl -sS "$BASE/smila/jobmanager/jobs/crawl/$RUN/" | jq '.tasks.successfulTaskCount // 0')
[ "$marked" -ge 3 ] && [ "$done_tasks" = 0 ] &&
    ok "written: the start task marked its links ($marked visited) and has not finished" ||
    fail "written: $marked visited, $done_tasks tasks done before the kill"
kill9_restart "$D"
if wait_run crawl "$RUN"; then ok "written: the run SUCCEEDED after the restart"; else
    fail "written: run state $(jq -r .state "$RUNJSON")"; fi
expect_index "$TMP/want" "written: every page is indexed after the retried start task wrote its links again"
stop_server
finish
