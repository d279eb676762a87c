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
# 4. finish: SUCCEEDED, the index holds exactly the three start URLs.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"

PIDS=""
trap 'kill $PIDS 2>/dev/null; cleanup' EXIT
python3 "$SRC/tests/integration/web_site.py" --port-file "$TMP/A.port" \
    --log "$TMP/A.log" --pages 12 --sitemaps &
PIDS="$PIDS $!"
for _ in $(seq 1 100); do [ -s "$TMP/A.port" ] && break; sleep 0.05; done
SITE="http://127.0.0.1:$(cat "$TMP/A.port")"

import_config "$TMP/config.json"
start_server --config "$TMP/config.json" --data-dir "$TMP/data"

params=$(jq -cn --arg a "$SITE" \
    '{dataSource: "depth", jobToPushTo: "indexUpdate", followSitemaps: true,
      filters: {maxCrawlDepth: 0, urlPatterns: {include: ["^" + $a + "/"]}},
      politeness: {delayMs: 0, maxConnectionsPerHost: 4}}')
req POST /smila/jobmanager/jobs/ -H 'Content-Type: application/json' \
    -d "{\"name\": \"crawlDepth\", \"workflow\": \"webCrawlingStandard\", \"parameters\": $params}"
expect_status 200 "a standard crawl job with maxCrawlDepth 0 and followSitemaps"
req POST /smila/jobmanager/jobs/crawlDepth/ -d '{"mode": "standard"}'
expect_status 200 "standard run started"
RUN=$(jq -r .jobId "$BODY")

# push RECORD_JSON: one record, then until its workflow run ended (every
# crawler task of it, the sitemap links' follow-up task too, is done)
pushed=0
push() {
    local i
    req POST /smila/job/crawlDepth/record -d "$1"
    [ "$STATUS" = 202 ] || { fail "push $1: $STATUS $(cat "$BODY")"; return 0; }
    pushed=$((pushed + 1))
    for i in $(seq 1 600); do
        curl -sS -o "$TMP/poll.json" "$BASE/smila/jobmanager/jobs/crawlDepth/$RUN/"
        jq -e ".workflowRuns.startedWorkflowRunCount >= $pushed and
                .workflowRuns.activeWorkflowRunCount == 0" "$TMP/poll.json" >/dev/null && return 0
        sleep 0.05
    done
    fail "the workflow run of start URL $pushed did not end"
}
requested() { grep -c " $1\$" "$TMP/A.log"; }

# ---- 1. the start page only; the sitemap URLs are too deep
push "{\"_recordid\": \"$SITE/\"}"
[ "$(requested /sitemap-a.xml)" -ge 1 ] && ok "the sitemaps were fetched" ||
    fail "sitemap-a.xml requests: $(requested /sitemap-a.xml)"
[ "$(requested /orphan/1.html)" = 0 ] && [ "$(requested /p/0.html)" = 0 ] &&
    ok "sitemap URLs (depth 1) are not fetched under maxCrawlDepth 0" ||
    fail "requested: $(awk '{print $4}' "$TMP/A.log" | sort -u | tr '\n' ' ')"

# ---- 2. a sitemap URL pushed as a start URL later in the run
push "{\"_recordid\": \"$SITE/orphan/1.html\"}"
[ "$(requested /orphan/1.html)" = 1 ] &&
    ok "a URL dropped as too deep before is crawled when a start URL reaches it" ||
    fail "/orphan/1.html requests: $(requested /orphan/1.html)"

# ---- 3. a link pushed too deep, then at depth 0
push "{\"_recordid\": \"deep\", \"httpUrl\": \"$SITE/p/5.html\", \"httpDepth\": 3}"
[ "$(requested /p/5.html)" = 0 ] && ok "a link deeper than maxCrawlDepth is not fetched" ||
    fail "/p/5.html requests: $(requested /p/5.html)"
push "{\"_recordid\": \"$SITE/p/5.html\"}"
[ "$(requested /p/5.html)" = 1 ] && ok "the same URL at depth 0 is crawled afterwards" ||
    fail "/p/5.html requests after the depth-0 push: $(requested /p/5.html)"

# ---- 4. finish
req POST "/smila/jobmanager/jobs/crawlDepth/$RUN/finish"
expect_status 200 "finish"
if wait_run crawlDepth "$RUN"; then ok "the run SUCCEEDED"; else fail "run: $(cat "$RUNJSON")"; fi
[ "$(counter links.tooDeep)" -ge 5 ] && ok "too-deep links are counted (links.tooDeep = $(counter links.tooDeep))" ||
    fail "links.tooDeep = $(counter links.tooDeep)"
snapshot "$TMP/snap"
ids "$TMP/snap" | LC_ALL=C sort >"$TMP/got"
printf '%s\n' "$SITE/" "$SITE/orphan/1.html" "$SITE/p/5.html" | LC_ALL=C sort >"$TMP/want"
cmp -s "$TMP/want" "$TMP/got" && ok "the index holds the three start URLs" ||
    fail "index: $(diff "$TMP/want" "$TMP/got" | head -c 600)"

stop_server
finish
