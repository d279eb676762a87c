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
# 5. the site is back: SUCCEEDED, nothing pushed, nothing removed; a page
#    that answers 500 (not the start URL) makes the run incomplete: no
#    completion, the page stays indexed;
# 6. two start URLs on two sites, both indexed; the second site goes down:
#    with full the run FAILED ("1 of 2 start URLs"), nothing deleted, its
#    pages stay in the index; with additive the run SUCCEEDED, the failure
#    counted; a start URL that answers 404 next to a working one does not
#    fail a full crawl (an answer, not an outage).
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"
. "$(dirname "$0")/web_lib.sh"

MUTATE="$TMP/mutate.json"
start_site site --mutate-file "$MUTATE" --pages 12

start_web_server

define_web webStart "$SITE" startfail '.deltaImportStrategy = "full" | .timeoutMs = 2000'

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
    expect_index "$TMP/want" "$1: the index keeps its $(wc -l <"$TMP/want") pages"
}

# ---- 1. the site is indexed
expect_crawl webStart "first crawl SUCCEEDED"
index_ids "$TMP/want"
site_expected "$SITE" --pages 12 | cmp -s - "$TMP/want" && ok "the site is indexed ($(wc -l <"$TMP/want"))" ||
    fail "index after the first crawl: $(head -c 300 "$TMP/want")"

# ---- 2. the start URL answers 503
echo '{"status": {"/": 503}}' >"$MUTATE"
crawl webStart && fail "a crawl whose start URL answers 503 succeeded" || true
expect_requests / -ge 4 "the start URL was tried again (429/503 retries)"
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
define_job webRefused webCrawling "$(web_params "$SITE" startfail '.deltaImportStrategy = "full" |
    .filters.urlPatterns.include = ["^https://elsewhere/"] | .politeness = {delayMs: 0}')"
expect_status 200 "a job whose start URL is outside its urlPatterns"
crawl webRefused && fail "a crawl whose start URL its filters refuse succeeded" || true
failed_run "start URL outside urlPatterns" "refused by filters.urlPatterns"

# ---- 5. the site is back
: >"$SITE_LOG"
expect_crawl webStart "crawl after recovery SUCCEEDED"
[ "$(counter records.pushed)" = 0 ] && [ "$(counter entries.removed)" = 0 ] &&
    ok "nothing pushed, nothing removed: the index was kept intact" ||
    fail "pushed $(counter records.pushed), removed $(counter entries.removed)"

# ---- 5b. a page (not the start URL) answers 500: the crawl succeeds but
# is incomplete, so nothing is deleted and the page stays indexed
echo '{"status": {"/p/3.html": 500}}' >"$MUTATE"
expect_crawl webStart "a crawl with one page answering 500 SUCCEEDED"
jq -e '.completion.skipped | test("could not read all its input .*p/3.html: HTTP 500")' "$RUNJSON" >/dev/null &&
    ok "a page answering 500 skips the completion ($(jq -r .completion.skipped "$RUNJSON" | head -c 200))" ||
    fail "completion: $(jq -c .completion "$RUNJSON")"
[ "$(counter entries.removed)" = 0 ] && ok "the page answering 500 is not deleted" ||
    fail "removed $(counter entries.removed)"
wait_indexed
expect_index "$TMP/want" "the index keeps every page while one answers 500"
rm -f "$MUTATE"
expect_crawl webStart "the page is back: SUCCEEDED"
jq -e '.completion.ran == true' "$RUNJSON" >/dev/null && ok "a complete crawl runs its completion" ||
    fail "completion: $(jq -c .completion "$RUNJSON")"

# ---- 6. two start URLs on two sites, one of them goes down
SITE1=$SITE
start_site site2 --pages 8
SITE2=$SITE
SITE=$SITE1
SITE_LOG="$TMP/site.log"
two() { # NAME STRATEGY START_URL...: a job crawling both sites
    local name=$1 strategy=$2 urls
    shift 2
    urls=$(jq -cn '$ARGS.positional' --args "$@")
    define_job "$name" webCrawling "$(web_params "$SITE1" startfail \
        ".deltaImportStrategy = \"$strategy\" | .startUrl = $urls |
         .filters.urlPatterns.include += [\"^$SITE2/\"]")"
}
two webTwo full "$SITE1/" "$SITE2/"
expect_status 200 "a full job with start URLs on two sites"
expect_crawl webTwo "full, both sites up: SUCCEEDED"
wait_indexed
{ cat "$TMP/want"; site_expected "$SITE2" --pages 8; } | LC_ALL=C sort >"$TMP/want2"
expect_index "$TMP/want2" "both sites are indexed ($(wc -l <"$TMP/want2") pages)"
kill "${SITE_PIDS##* }" # site2 goes down
crawl webTwo && fail "a full crawl with a start URL down succeeded" || true
[ "$(jq -r .state "$RUNJSON")" = FAILED ] && ok "full, one of two start URLs down: the run FAILED" ||
    fail "full, one start URL down: state $(jq -r .state "$RUNJSON")"
jq -e --arg d "$SITE2" '.errors | tostring | test("1 of 2 start URLs could not be crawled") and contains($d)' \
    "$RUNJSON" >/dev/null && ok "the run data names the failed start URL ($(jq -c '.errors[0]' "$RUNJSON" | head -c 200))" ||
    fail "errors $(jq -c .errors "$RUNJSON" | head -c 400)"
[ "$(counter entries.removed)" = 0 ] && ok "no delta-delete ran" ||
    fail "removed $(counter entries.removed)"
wait_indexed
expect_index "$TMP/want2" "the index keeps the pages of the site that is down"
two webTwoAdd additive "$SITE1/" "$SITE2/"
expect_status 200 "the same job with additive"
expect_crawl webTwoAdd "additive, one of two start URLs down: the run SUCCEEDED"
expect_counter robots.unreachable -ge 1 "the failed start URL is counted (its host's robots.txt unreachable)"
wait_indexed
expect_index "$TMP/want2" "the index still has both sites' pages"
# an answer is no outage: a start URL that is gone (404) next to one that
# works does not fail a full crawl; the gone page is not indexed
two webGone full "$SITE1/" "$SITE1/gone.html"
expect_status 200 "a full job with a second start URL that answers 404"
expect_crawl webGone "full, a start URL answers 404: SUCCEEDED"
expect_counter links.failed.client -ge 1 "the 404 is counted"

stop_server
finish
