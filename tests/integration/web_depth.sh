#!/bin/bash
# Web import: links that break maxCrawlDepth are dropped before they are
# marked visited, so a URL a later, shorter path reaches is still crawled.
# A standard-mode crawl job (webCrawlingStandard) with maxCrawlDepth 0 and
# followSitemaps on a generated site (web_site.py --sitemaps: robots.txt
# names sitemaps listing /orphan/1.html, /p/0.html, ...):
# 1. start URL / : only it is crawled; the sitemap URLs (depth 1) are
#    counted too deep and never requested;
# 2. /orphan/1.html, listed by the sitemap, pushed as a start URL in the
#    same job run (depth 0): crawled and indexed;
# 3. /p/5.html pushed with httpDepth 3 (too deep, dropped), then pushed
#    again at depth 0: crawled and indexed;
# 4. finish: SUCCEEDED, the index holds exactly the three start URLs;
# 5. another site whose start page also links /p/4.html, crawled (runOnce)
#    from / and /r/to-4 (a redirect to /p/4.html) with maxCrawlDepth 1:
#    the redirect answers after 1 s, so the start page's link to
#    /p/4.html (depth 1) is held for its visit when the redirect comes;
#    the redirect takes it over: /p/4.html is fetched once, at depth 0,
#    and its links /p/5.html and /p/6.html (depth 1) are fetched too.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"
. "$(dirname "$0")/web_lib.sh"

start_site A --pages 12 --sitemaps

start_web_server

define_job crawlDepth webCrawlingStandard "$(web_params "$SITE" depth \
    'del(.startUrl) | .followSitemaps = true | .filters.maxCrawlDepth = 0')"
expect_status 200 "a standard crawl job with maxCrawlDepth 0 and followSitemaps"
start_standard crawlDepth
expect_status 200 "standard run started"

# push RECORD_JSON: one record, then until its workflow run ended (every
# crawler task of it, the sitemap links' follow-up task too, is done)
runs_ended() {
    curl -sS -o "$TMP/poll.json" "$BASE/smila/jobmanager/jobs/crawlDepth/$RUN/"
    jq -e ".workflowRuns.startedWorkflowRunCount >= $PUSHED and
            .workflowRuns.activeWorkflowRunCount == 0" "$TMP/poll.json" >/dev/null
}
push() {
    push_record crawlDepth "$1" || return 0
    poll 600 0.05 runs_ended || fail "the workflow run of start URL $PUSHED did not end"
}

# ---- 1. the start page only; the sitemap URLs are too deep
push "{\"_recordid\": \"$SITE/\"}"
expect_requests /sitemap-a.xml -ge 1 "the sitemaps were fetched"
[ "$(requests /orphan/1.html)" = 0 ] && [ "$(requests /p/0.html)" = 0 ] &&
    ok "sitemap URLs (depth 1) are not fetched under maxCrawlDepth 0" ||
    fail "requested: $(awk '{print $4}' "$TMP/A.log" | sort -u | tr '\n' ' ')"

# ---- 2. a sitemap URL pushed as a start URL later in the run
push "{\"_recordid\": \"$SITE/orphan/1.html\"}"
expect_requests /orphan/1.html = 1 "a URL dropped as too deep before is crawled when a start URL reaches it"

# ---- 3. a link pushed too deep, then at depth 0
push "{\"_recordid\": \"deep\", \"httpUrl\": \"$SITE/p/5.html\", \"httpDepth\": 3}"
expect_requests /p/5.html = 0 "a link deeper than maxCrawlDepth is not fetched"
push "{\"_recordid\": \"$SITE/p/5.html\"}"
expect_requests /p/5.html = 1 "the same URL at depth 0 is crawled afterwards"

# ---- 4. finish
req POST "/smila/jobmanager/jobs/crawlDepth/$RUN/finish"
expect_status 200 "finish"
if wait_run crawlDepth "$RUN"; then ok "the run SUCCEEDED"; else fail "run: $(cat "$RUNJSON")"; fi
expect_counter links.tooDeep -ge 5 "too-deep links are counted (links.tooDeep = $(counter links.tooDeep))"
printf '%s\n' "$SITE/" "$SITE/orphan/1.html" "$SITE/p/5.html" | LC_ALL=C sort >"$TMP/want"
expect_index "$TMP/want" "the index holds the three start URLs"

# ---- 5. a redirect to a link the start task found on a page
echo '{"stall": {"/r/to-4": 1}}' >"$TMP/B.mutate" # the start page first
start_site B --pages 12 --link /p/4.html --mutate-file "$TMP/B.mutate"
define_web webRedirDepth "$SITE" redirdepth \
    '.startUrl = [$site + "/", $site + "/r/to-4"] | .filters.maxCrawlDepth = 1'
expect_crawl webRedirDepth "a crawl from / and /r/to-4 with maxCrawlDepth 1 SUCCEEDED"
got=$(awk '$4 != "/robots.txt" {print $4}' "$SITE_LOG" | sort | tr '\n' ' ')
[ "$got" = "/ /p/0.html /p/1.html /p/4.html /p/5.html /p/6.html /r/to-4 " ] &&
    ok "/p/4.html fetched once at depth 0 (the redirect's), its links at depth 1 too" ||
    fail "requested: $got"

stop_server
finish
