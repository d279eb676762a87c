#!/bin/bash
# Next checks of a crawl's documents (issue 32, the delta service's part of
# continuous crawling), against the real server: a file crawl job with
# recheck {minSeconds 60, maxSeconds 240}:
# - after the first run every file has a next check a minute away
#   (GET /smila/importing/documents/<source>/<id>: delta.nextCheck,
#   delta.recheckIntervalSeconds), the archive too, its entries none;
# - a second run with nothing changed doubles the interval (120 s; the
#   fileCrawler's pre-check finds them up to date); a third 240, a fourth
#   stays at the maximum 240;
# - a file changed before the next run has its interval halved (120),
#   the others stay at 240;
# - with deltaPrecheck off the deltaChecker sees every file: the same
#   rules;
# - a web crawl's pages get theirs the same way (the deltaChecker of
#   webCrawling);
# - maxSeconds below minSeconds is refused when the job is defined.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"
. "$(dirname "$0")/web_lib.sh"

T="$TMP/tree"
mkdir -p "$T/sub"
echo "alpha words" >"$T/a.txt"
echo "beta words" >"$T/sub/b.txt"
echo "gamma words" >"$T/c.txt"
(cd "$T" && zip -q pack.zip a.txt c.txt)
T=$(realpath "$T")

import_config "$TMP/config.json"
start_server --config "$TMP/config.json" --data-dir "$TMP/data"

# interval SOURCE PATH: the record's recheck interval in seconds ("null")
interval() {
    curl -sS -G "$BASE/smila/importing/documents/$1" --data-urlencode "id=$2" |
        jq -r '.delta.recheckIntervalSeconds'
}
# expect_intervals SOURCE WANT_A WANT_B WANT_C DESCRIPTION
expect_intervals() {
    local got
    got="$(interval "$1" "$T/a.txt") $(interval "$1" "$T/sub/b.txt") $(interval "$1" "$T/c.txt")"
    [ "$got" = "$2 $3 $4" ] && ok "$5 ($got s)" || fail "$5: intervals $got, want $2 $3 $4"
}

define_crawl files "$T" fs '{"recheck": {"minSeconds": 60, "maxSeconds": 240}}'
before=$(($(date +%s) * 1000))
expect_crawl files "first run SUCCEEDED"
expect_intervals fs 60 60 60 "new files get the minimum interval"
req GET "/smila/importing/documents/fs" -G --data-urlencode "id=$T/a.txt"
next=$(jq -r '.delta.nextCheck' "$BODY")
next_ms=$(python3 -c "import datetime,sys; print(int(datetime.datetime.fromisoformat(sys.argv[1].replace('Z','+00:00')).timestamp()*1000))" "$next")
[ $((next_ms - before)) -ge 60000 ] && [ $((next_ms - before)) -le 180000 ] &&
    ok "its next check is a minute after the check ($next)" || fail "next check $next (run began at $before ms)"
[ "$(interval fs "$T/pack.zip")" = 60 ] && ok "the archive has a next check" ||
    fail "pack.zip: $(interval fs "$T/pack.zip")"
req GET "/smila/importing/documents/fs" -G --data-urlencode "id=$T/pack.zip!/a.txt"
jq -e '.delta != null and .delta.recheckIntervalSeconds == null' "$BODY" >/dev/null &&
    ok "the archive's entries have a delta entry but no next check (their archive is checked)" ||
    fail "pack.zip!/a.txt: $(jq -c .delta "$BODY")"

expect_crawl files "second run, nothing changed, SUCCEEDED"
expect_intervals fs 120 120 120 "unchanged: the interval doubles"
expect_crawl files "third run SUCCEEDED"
expect_intervals fs 240 240 240 "unchanged again: doubled to the maximum"
expect_crawl files "fourth run SUCCEEDED"
expect_intervals fs 240 240 240 "unchanged at the maximum: it stays there"
echo "beta words, changed" >"$T/sub/b.txt"
expect_crawl files "a run after one file changed SUCCEEDED"
expect_intervals fs 240 120 240 "the changed file's interval halves, the others stay"

# deltaPrecheck off: the deltaChecker records every outcome
define_crawl nopre "$T" fs2 '{"deltaPrecheck": false, "recheck": {"minSeconds": 60, "maxSeconds": 240}}'
expect_crawl nopre "first run without pre-check SUCCEEDED"
expect_intervals fs2 60 60 60 "without pre-check: new files get the minimum"
expect_crawl nopre "second run without pre-check SUCCEEDED"
expect_intervals fs2 120 120 120 "without pre-check: unchanged files double"

# a web crawl: its pages through the deltaChecker
start_site W --pages 4
define_web web "$SITE_W" site '.recheck = {minSeconds: 60, maxSeconds: 240}'
expect_crawl web "a web crawl with recheck SUCCEEDED"
[ "$(interval site "$SITE_W/")" = 60 ] && ok "a new web page gets the minimum interval" ||
    fail "web page: $(interval site "$SITE_W/")"
expect_crawl web "a second web crawl SUCCEEDED"
[ "$(interval site "$SITE_W/")" = 120 ] && ok "an unchanged web page's interval doubles" ||
    fail "web page: $(interval site "$SITE_W/")"

req POST /smila/jobmanager/jobs/ -H 'Content-Type: application/json' \
    -d "{\"name\": \"bad\", \"workflow\": \"fileCrawling\", \"parameters\": {\"dataSource\": \"fs3\",
         \"rootFolder\": \"$T\", \"jobToPushTo\": \"indexUpdate\",
         \"recheck\": {\"minSeconds\": 600, \"maxSeconds\": 60}}}"
expect_status 400 "maxSeconds below minSeconds is refused"
jq -e '.error.field | test("recheck.maxSeconds")' "$BODY" >/dev/null &&
    ok "the error names recheck.maxSeconds" || fail "error: $(cat "$BODY")"

stop_server
finish
