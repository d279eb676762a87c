#!/bin/bash
# Continuous crawling (issue 32), against the real server with its
# schedules' clock driven by the test (SLUICE_TEST_CLOCK=1, POST
# /smila/debug/clock), never by sleeping.  A file crawl job in mode
# continuous, checkSeconds 30, reseedSeconds 600, expirySeconds 1200,
# recheck {60, 240}, strategy full:
# 1. the run is RUNNING, CONTINUOUS, and starts its first pass (a reseed)
#    at the first tick: the three files are indexed, their next checks a
#    minute after the clock's time (the pass's time, not the wall clock);
# 2. no pass before checkSeconds; then a due pass checks the due files
#    only: a changed file is indexed again, the unchanged ones' intervals
#    double; a file added meanwhile is not seen (no reseed yet);
# 3. kill -9 and a restart: the run is RUNNING again with its passes;
# 4. reseedSeconds after the first reseed a pass is a reseed: the new
#    file is indexed; a deleted file is not yet expired;
# 5. once no pass has seen the deleted file for expirySeconds, the expiry
#    after a reseed deletes it from the index and the delta service; the
#    others stay;
# 6. finish: the run SUCCEEDS and deletes nothing (no sweep);
# 7. bad "continuous" parameters are refused when defined; a workflow
#    that does not list the mode refuses it at start;
# 8. a web crawl in mode continuous: the reseed crawls the site, a due
#    pass fetches each due page once without following its links, a pass
#    with nothing due fetches nothing.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"
. "$(dirname "$0")/web_lib.sh"

export SLUICE_TEST_CLOCK=1
T="$TMP/tree"
mkdir -p "$T/sub"
echo "alpha words" >"$T/a.txt"
echo "beta words" >"$T/sub/b.txt"
echo "gamma words" >"$T/c.txt"
T=$(realpath "$T")
import_config "$TMP/config.json"
start_server --config "$TMP/config.json" --data-dir "$TMP/data"

T0=$(date -u -d 2030-01-01T00:00:00Z +%s)
# clock SECONDS: the schedules' tick at T0 + SECONDS
clock() {
    req POST /smila/debug/clock -d "{\"now\": $(((T0 + $1) * 1000))}"
    [ "$STATUS" = 200 ] || fail "clock +$1: $STATUS $(cat "$BODY")"
}
JOB=cont
run_data() { req GET "/smila/jobmanager/jobs/$JOB/$RUN/"; }
# settled PASSES: until the run has started PASSES passes and none (nor
# its expiry) is going, and the index caught up; the run data in BODY
settled() {
    local i
    for i in $(seq 1 300); do
        run_data
        jq -e ".continuous.passes == $1 and .continuous.activeWorkflowRuns == 0" "$BODY" >/dev/null && break
        sleep 0.05
    done
    wait_indexed || fail "the index did not catch up"
    run_data
}
found() {
    curl -sS -G "$BASE/smila/index/default/search" --data-urlencode "q=$1" | jq -r '.total // 0'
}
interval() {
    curl -sS -G "$BASE/smila/importing/documents/cs" --data-urlencode "id=$1" |
        jq -r '.delta.recheckIntervalSeconds'
}

# ---- 7 (first: definitions)
define_crawl bad "$T" bs '{"continuous": {"checkSeconds": 0}}' 2>/dev/null || true
expect_status 400 "continuous.checkSeconds 0 is refused when defined"
expect_jq '.error.field == "parameters.continuous.checkSeconds"' "the error names parameters.continuous.checkSeconds"
define_crawl bad "$T" bs '{"continuous": {"reseedSeconds": 600, "expirySeconds": 600}}' 2>/dev/null || true
expect_status 400 "an expiry not above the reseed interval is refused"
expect_jq '.error.field == "parameters.continuous.expirySeconds"' "the error names parameters.continuous.expirySeconds"
define_crawl bad "$T" bs '{"continuous": {"checkSecs": 5}}' 2>/dev/null || true
expect_status 400 "an unknown key of continuous is refused"
req POST /smila/jobmanager/jobs/indexUpdate/ -d '{"mode": "continuous"}'
expect_status 400 "a workflow that does not list mode continuous refuses it"

# ---- 1. the first pass
define_crawl cont "$T" cs '{"deltaImportStrategy": "full", "recheck": {"minSeconds": 60, "maxSeconds": 240},
    "continuous": {"checkSeconds": 30, "reseedSeconds": 600, "expirySeconds": 1200}}'
req POST /smila/jobmanager/jobs/cont/ -d '{"mode": "continuous"}'
expect_status 200 "a continuous run starts"
RUN=$(jq -r .jobId "$BODY")
run_data
expect_jq '.state == "RUNNING" and .runMode == "CONTINUOUS" and .continuous.passes == 0' \
    "the run is RUNNING, CONTINUOUS, no pass before the first tick"
clock 0
settled 1
expect_jq '.state == "RUNNING" and .continuous.currentPass == null and .continuous.expiryPhases == 1' \
    "the first pass (a reseed) ran, and its expiry; the run stays RUNNING"
[ "$(found alpha) $(found beta) $(found gamma)" = "1 1 1" ] && ok "the three files are indexed" ||
    fail "found: $(found alpha) $(found beta) $(found gamma)"
req GET /smila/importing/documents/cs -G --data-urlencode "id=$T/a.txt"
want=$(date -u -d @$((T0 + 60)) +%Y-%m-%dT%H:%M:%S)
jq -e --arg w "$want" '.delta.nextCheck | startswith($w)' "$BODY" >/dev/null &&
    ok "next checks are a minute after the pass's time ($want)" || fail "nextCheck $(jq -c .delta "$BODY")"

# ---- 2. a due pass
echo "beta words, changed twice: delta" >"$T/sub/b.txt"
echo "delta new words" >"$T/d.txt"
clock 10
run_data
expect_jq '.continuous.passes == 1' "no pass before checkSeconds"
clock 61
settled 2
[ "$(found delta)" = 1 ] && ok "the due pass indexed the changed file again" || fail "changed b: $(found delta)"
[ "$(interval "$T/a.txt") $(interval "$T/sub/b.txt")" = "120 60" ] &&
    ok "unchanged: interval doubled; changed: halved to the minimum" ||
    fail "intervals $(interval "$T/a.txt") $(interval "$T/sub/b.txt")"
[ "$(interval "$T/d.txt")" = null ] && ok "the new file is not seen by a due pass" ||
    fail "d.txt: $(interval "$T/d.txt")"
expect_jq '[.worker[] | .["files.due"] // 0] | add == 3' "the due pass looked at the three due files"

# ---- 3. kill -9 and restart
kill9_restart "$TMP/data"
run_data
expect_jq '.state == "RUNNING" and .continuous.passes == 2' "after kill -9 the run is RUNNING with its passes"
clock 100
settled 3
expect_jq '.continuous.lastReseedTime | startswith("2030-01-01T00:00:00")' "a pass at +100 s is a due pass"

# ---- 4. the reseed
rm "$T/c.txt"
clock 601
settled 4
[ "$(found delta)" = 2 ] && ok "the reseed indexed the new file" || fail "delta: $(found delta)"
[ "$(found gamma)" = 1 ] && ok "the deleted file is not expired yet" || fail "gamma: $(found gamma)"

# ---- 5. expiry
clock 1300
settled 5
clock 1901
settled 6
[ "$(found gamma)" = 0 ] && ok "not seen for expirySeconds: deleted from the index" || fail "gamma: $(found gamma)"
req GET /smila/importing/documents/cs -G --data-urlencode "id=$T/c.txt"
expect_jq '.delta == null' "and from the delta service"
[ "$(found alpha) $(found beta) $(found delta)" = "1 1 2" ] && ok "the files that exist stay" ||
    fail "found: $(found alpha) $(found beta) $(found delta)"

# ---- 6. finish
rm "$T/a.txt"
req POST "/smila/jobmanager/jobs/cont/$RUN/finish"
expect_status 200 "finish"
for _ in $(seq 1 100); do
    run_data
    jq -e '.state == "SUCCEEDED"' "$BODY" >/dev/null && break
    sleep 0.05
done
expect_jq '.state == "SUCCEEDED"' "the continuous run SUCCEEDED"
wait_indexed
[ "$(found alpha)" = 1 ] && ok "finishing deleted nothing (no whole-source sweep)" || fail "alpha: $(found alpha)"

# ---- 8. the web
start_site W --pages 4 --mutate-file "$TMP/mutate.json"
define_web webc "$SITE_W" wsrc '.recheck = {minSeconds: 60, maxSeconds: 240}
    | .continuous = {checkSeconds: 30, reseedSeconds: 600, expirySeconds: 1200}'
req POST /smila/jobmanager/jobs/webc/ -d '{"mode": "continuous"}'
expect_status 200 "a continuous web crawl starts"
RUN=$(jq -r .jobId "$BODY") JOB=webc
# wcount NAME: the webCrawler's counter NAME in the run data in BODY
wcount() { jq "[.worker[] | .[\"$1\"] // 0] | add" "$BODY"; }
clock 3000
settled 1
av1=$(wcount links.alreadyVisited)
pages=0
for u in $(site_expected "$SITE_W" --pages 4 | grep -v '!/'); do
    [ "$(curl -sS -G "$BASE/smila/importing/documents/wsrc" --data-urlencode "id=$u" |
        jq -r .delta.recheckIntervalSeconds)" = 60 ] && pages=$((pages + 1))
done
[ "$pages" -ge 5 ] && ok "the reseed gave $pages pages a next check" || fail "$pages pages with a next check"
[ "$(requests /p/1.html) $(requests /)" = "1 1" ] && ok "the reseed crawled the site" ||
    fail "requests: /p/1.html $(requests /p/1.html), / $(requests /)"
clock 3061
settled 2
[ "$(wcount links.due)" = "$pages" ] && ok "the due pass read the $pages due pages" ||
    fail "links.due $(wcount links.due), want $pages"
[ "$(requests /p/1.html) $(requests /) $(requests /p/sub/b.html)" = "2 2 2" ] &&
    ok "each due page was fetched once more" ||
    fail "requests: $(requests /p/1.html) $(requests /) $(requests /p/sub/b.html)"
[ "$(wcount links.alreadyVisited)" = "$av1" ] && ok "and no link of a due page was looked at" ||
    fail "links.alreadyVisited $av1 after the reseed, $(wcount links.alreadyVisited) after the due pass"
[ "$(curl -sS -G "$BASE/smila/importing/documents/wsrc" --data-urlencode "id=$SITE_W/p/1.html" |
    jq -r .delta.recheckIntervalSeconds)" = 120 ] && ok "an unchanged page's interval doubled" ||
    fail "interval of /p/1.html"
clock 3100
settled 3
[ "$(requests /p/1.html)" = 2 ] && ok "a pass with nothing due fetched nothing" ||
    fail "/p/1.html requested $(requests /p/1.html) times"
echo '{"remove": ["/p/2.html"]}' >"$TMP/mutate.json"
clock 3200
settled 4
[ "$(requests /p/2.html)" = 3 ] && [ "$(wcount links.dueGone)" = 1 ] &&
    ok "a due page that answers 404 is counted (links.dueGone)" ||
    fail "/p/2.html requested $(requests /p/2.html) times, links.dueGone $(wcount links.dueGone)"
[ "$(curl -sS -G "$BASE/smila/importing/documents/wsrc" --data-urlencode "id=$SITE_W/p/2.html" |
    jq -r .delta.recheckIntervalSeconds)" = 240 ] && ok "and its next check moves on (240 s), not every pass" ||
    fail "interval of /p/2.html"
req POST "/smila/jobmanager/jobs/webc/$RUN/cancel"
expect_status 200 "cancel"
finish
