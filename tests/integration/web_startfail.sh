#!/bin/bash
# Web import: a runOnce crawl with strategy full whose start URL cannot be
# crawled must not delete the source from the index.  A generated site
# (web_site.py, changed between crawls through its mutate file):
# 1. a crawl indexes the site;
# 2. the start URL answers 503 (retried, then given up): the run FAILED,
#    its errors name the start URL and the status, no completion ran and
#    the index keeps every page;
# 3. robots.txt stalls past timeoutMs (disallow all for the run): the
#    same, the error says robots.txt was unreachable;
# 4. a start URL outside urlPatterns (another job on the same source):
#    the same, nothing deleted;
# 5. the site is back: SUCCEEDED, nothing pushed, nothing removed.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"

SITE_LOG="$TMP/access.log"
MUTATE="$TMP/mutate.json"
python3 "$SRC/tests/integration/web_site.py" --port-file "$TMP/site.port" \
    --log "$SITE_LOG" --mutate-file "$MUTATE" --pages 12 &
SITE_PID=$!
trap 'kill $SITE_PID 2>/dev/null; cleanup' EXIT
for _ in $(seq 1 100); do [ -s "$TMP/site.port" ] && break; sleep 0.05; done
SITE="http://127.0.0.1:$(cat "$TMP/site.port")"

import_config "$TMP/config.json"
start_server --config "$TMP/config.json" --data-dir "$TMP/data"

define() { # NAME START_URL
    local params
    params=$(jq -cn --arg url "$2" --arg inc "^$SITE/" \
        '{dataSource: "startfail", startUrl: $url, jobToPushTo: "indexUpdate",
          deltaImportStrategy: "full", timeoutMs: 2000,
          filters: {urlPatterns: {include: [$inc]}},
          politeness: {delayMs: 0, maxConnectionsPerHost: 4}}')
    req POST /smila/jobmanager/jobs/ -H 'Content-Type: application/json' \
        -d "{\"name\": \"$1\", \"workflow\": \"webCrawling\", \"parameters\": $params}"
    [ "$STATUS" = 200 ] || { echo "define $1: $STATUS $(cat "$BODY")" >&2; return 1; }
}
define webStart "$SITE/"
index_ids() { snapshot "$TMP/snap"; ids "$TMP/snap" | LC_ALL=C sort >"$1"; }

# failed_run WHAT PATTERN: the last crawl FAILED, its errors match
# PATTERN, no completion, and the index is the one of the first crawl
failed_run() {
    [ "$(jq -r .state "$RUNJSON")" = FAILED ] && ok "$1: the run FAILED" ||
        fail "$1: state $(jq -r .state "$RUNJSON")"
    jq -e --arg p "$2" '.errors | tostring | test("no start URL could be crawled") and test($p)' \
        "$RUNJSON" >/dev/null && ok "$1: the run data says why ($(jq -c '.errors[0]' "$RUNJSON" | head -c 200))" ||
        fail "$1: errors $(jq -c .errors "$RUNJSON" | head -c 400)"
    [ "$(counter records.deleted)" = 0 ] && [ "$(counter entries.removed)" = 0 ] &&
        ok "$1: no delta-delete ran" ||
        fail "$1: deleted $(counter records.deleted), removed $(counter entries.removed)"
    wait_indexed
    index_ids "$TMP/got"
    cmp -s "$TMP/want" "$TMP/got" && ok "$1: the index keeps its $(wc -l <"$TMP/got") pages" ||
        fail "$1: index $(diff "$TMP/want" "$TMP/got" | head -c 400)"
}

# ---- 1. the site is indexed
if crawl webStart; then ok "first crawl SUCCEEDED"; else fail "crawl: $(cat "$TMP/crawl.err")"; fi
index_ids "$TMP/want"
python3 "$SRC/tests/integration/web_site.py" --pages 12 --expected | sed "s|^|$SITE|" |
    LC_ALL=C sort | cmp -s - "$TMP/want" && ok "the site is indexed ($(wc -l <"$TMP/want"))" ||
    fail "index after the first crawl: $(head -c 300 "$TMP/want")"

# ---- 2. the start URL answers 503
echo '{"status": {"/": 503}}' >"$MUTATE"
crawl webStart && fail "a crawl whose start URL answers 503 succeeded" || true
[ "$(grep -c ' /$' "$SITE_LOG")" -ge 4 ] && ok "the start URL was tried again (429/503 retries)" ||
    fail "start URL requests: $(grep -c ' /$' "$SITE_LOG")"
failed_run "start URL 503" "$SITE/: HTTP 503"

# ---- 3. robots.txt stalls
echo '{"stall": {"/robots.txt": 4}}' >"$MUTATE"
: >"$SITE_LOG"
crawl webStart && fail "a crawl whose robots.txt times out succeeded" || true
[ "$(awk '$4 != "/robots.txt"' "$SITE_LOG" | wc -l)" = 0 ] && ok "nothing but robots.txt was requested" ||
    fail "requested: $(awk '{print $4}' "$SITE_LOG" | tr '\n' ' ')"
failed_run "robots.txt timeout" "robots.txt of .* unreachable"

# ---- 4. a start URL the job's own filters refuse
rm -f "$MUTATE"
params=$(jq -cn --arg url "$SITE/" \
    '{dataSource: "startfail", startUrl: $url, jobToPushTo: "indexUpdate",
      deltaImportStrategy: "full", filters: {urlPatterns: {include: ["^https://elsewhere/"]}},
      politeness: {delayMs: 0}}')
req POST /smila/jobmanager/jobs/ -H 'Content-Type: application/json' \
    -d "{\"name\": \"webRefused\", \"workflow\": \"webCrawling\", \"parameters\": $params}"
expect_status 200 "a job whose start URL is outside its urlPatterns"
crawl webRefused && fail "a crawl whose start URL its filters refuse succeeded" || true
failed_run "start URL outside urlPatterns" "refused by filters.urlPatterns"

# ---- 5. the site is back
: >"$SITE_LOG"
if crawl webStart; then ok "crawl after recovery SUCCEEDED"; else fail "crawl 5: $(cat "$TMP/crawl.err")"; fi
[ "$(counter records.pushed)" = 0 ] && [ "$(counter entries.removed)" = 0 ] &&
    ok "nothing pushed, nothing removed: the index was kept intact" ||
    fail "pushed $(counter records.pushed), removed $(counter entries.removed)"

stop_server
finish
