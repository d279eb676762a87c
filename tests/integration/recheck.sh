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
# - a due pass (recheckDue, deltaImportStrategy additive) looks at the
#   due files only: a changed one is pushed again and indexed, an unchanged
#   one's interval doubles, a gone one is counted and left to the next
#   full crawl; with nothing due it looks at nothing; with the strategy
#   full it is refused when defined;
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

# ---- a due pass: a runOnce job with recheckDue (in use, a scheduled one)
# looks only at the files whose next check is due
D="$TMP/duetree"
mkdir -p "$D"
for f in one two three; do echo "due file $f plainword" >"$D/$f.txt"; done
D=$(realpath "$D")
define_crawl dueFull "$D" duesrc '{"recheck": {"minSeconds": 5, "maxSeconds": 20}}'
expect_crawl dueFull "the due source's full crawl SUCCEEDED"
define_crawl duePass "$D" duesrc '{"recheck": {"minSeconds": 5, "maxSeconds": 20},
    "recheckDue": true, "deltaImportStrategy": "additive"}'
sleep 5.5 # every file due now
echo "due file two, now with a zebrafinch" >"$D/two.txt"
touch -d '+1 minute' "$D/two.txt"
rm "$D/three.txt"
expect_crawl duePass "a due pass SUCCEEDED"
expect_counter files.due = 2 "the due pass looked at the two due files still there"
expect_counter files.dueGone = 1 "and counted the one that is gone"
got="$(interval duesrc "$D/one.txt") $(interval duesrc "$D/two.txt") $(interval duesrc "$D/three.txt")"
[ "$got" = "10 5 10" ] && ok "unchanged doubled, changed kept at the minimum, the gone one moved on ($got s)" ||
    fail "intervals after the due pass: $got, want 10 5 10"
# at once again: one.txt and three.txt are due in 10 s, two.txt in 5 s
# (which a loaded machine may reach before the pass starts)
expect_crawl duePass "a second due pass SUCCEEDED"
expect_counter files.due -le 1 "at most the changed file was due again: the others were not looked at"
wait_indexed
"$SLUICE" search --server "$BASE" zebrafinch >"$TMP/hits" 2>&1
grep -q "two.txt" "$TMP/hits" && ok "the changed file's new text is indexed by the due pass" ||
    fail "search zebrafinch: $(head -c 300 "$TMP/hits")"
req GET "/smila/importing/documents/duesrc" -G --data-urlencode "id=$D/three.txt"
jq -e '.indexes == ["default"]' "$BODY" >/dev/null &&
    ok "the additive due pass deleted nothing (the gone file waits for the next full crawl)" ||
    fail "three.txt: $(head -c 300 "$BODY")"
define_job dueBad fileCrawling "{\"dataSource\": \"duesrc\", \"rootFolder\": \"$D\",
    \"jobToPushTo\": \"indexUpdate\", \"recheck\": {\"minSeconds\": 2}, \"recheckDue\": true}"
expect_status 400 "a due pass with the strategy full is refused"
jq -e '.error.field | test("deltaImportStrategy")' "$BODY" >/dev/null &&
    ok "the error names deltaImportStrategy" || fail "error: $(cat "$BODY")"

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
