#!/bin/bash
# Web import: bodies are not held in memory up to maxSize.  A generated
# site (web_site.py --big 16) links sixteen 5 MiB HTML pages without a
# validator (their delta hash is the SHA-256 of the content) whose only
# link is at the very end, and a 5 MiB text file; the server sends the
# first half of each page, then holds all sixteen until every one is that
# far, so they are all in flight at once (parallelTransfers 16):
# - every page is indexed, its first words searchable, and the links at
#   the end of the 5 MiB pages were found (their children are indexed);
# - the server's peak RSS (VmHWM) stays well under what holding the
#   bodies would take (16 x 5 MiB in flight, 80 MiB before any buffer
#   growth or copy): with a workflow of the webCrawler alone it grows by
#   less than 32 MiB; with the whole webCrawling workflow (textExtractor,
#   indexWriter on those records) by less than 64 MiB;
# - a re-crawl pushes nothing (the SHA-256 taken while streaming is
#   stable) and deletes nothing.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"
. "$(dirname "$0")/web_lib.sh"

start_site site --pages 8 --big 16

# under AddressSanitizer freed memory waits in a quarantine (256 MiB) and
# counts in the RSS: keep it small, so the peak shows what is held
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=1"
start_web_server
base_rss=$(server_peak_rss_kib)

# ---- 1. the crawler alone (a workflow without the processing after
# it): its own memory
req POST /smila/jobmanager/workflows/ -H 'Content-Type: application/json' -d '{
  "name": "webCrawlOnly", "modes": ["runOnce"], "parameters": {"tempStore": "temp"},
  "startAction": {"worker": "webCrawler",
    "input": {"linksToCrawl": "linksToCrawlBucket"},
    "output": {"linksToCrawl": "linksToCrawlBucket", "crawledRecords": "crawledOnlyBucket"}}}'
expect_status 200 "a workflow with the webCrawler only"
define() { # NAME WORKFLOW SOURCE: 16 connections and transfers at once
    # (the crawler alone has no updatePusher: no jobToPushTo, an unknown
    # parameter there)
    local drop=.
    [ "$2" = webCrawlOnly ] && drop='del(.jobToPushTo)'
    define_job "$1" "$2" "$(web_params "$SITE" "$3" '.politeness += {maxConnectionsPerHost: 16, parallelTransfers: 16} | '"$drop")"
    [ "$STATUS" = 200 ] || { fail "define $1: $STATUS $(cat "$BODY")"; return 1; }
}
define webBigOnly webCrawlOnly bigonly
expect_crawl webBigOnly "crawl-only run SUCCEEDED"
rss=$(server_peak_rss_kib)
expect_counter records.crawled = 45 "every page and resource crawled (45 records)"
expect_requests '/bigp/child[0-9]*.html' = 16 "the links at the end of the 5 MiB pages were followed"
echo "peak RSS: $((base_rss / 1024)) MiB after start, $((rss / 1024)) MiB after the crawl-only run"
[ "$rss" -lt $((base_rss + 32 * 1024)) ] &&
    ok "the crawler's peak RSS grew by $(((rss - base_rss) / 1024)) MiB, less than 32 MiB for 80 MiB of bodies in flight" ||
    fail "the crawler's peak RSS grew by $(((rss - base_rss) / 1024)) MiB ($((rss / 1024)) MiB)"

# ---- 2. the whole webCrawling workflow: indexed
: >"$SITE_LOG"
define webBig webCrawling big
expect_crawl webBig "crawl SUCCEEDED"
rss=$(server_peak_rss_kib)
{
    site_expected "$SITE" --pages 8
    for i in $(seq 0 15); do echo "$SITE/bigp/$i.html"; echo "$SITE/bigp/child$i.html"; done
    echo "$SITE/bigp/text.txt"
} | LC_ALL=C sort >"$TMP/want"
expect_index "$TMP/want" "every page is indexed, the children linked at the end of the 5 MiB pages too ($(wc -l <"$TMP/want"))"
expect_requests '/bigp/[0-9]*.html' = 16 "each big page was fetched once"
expect_hit bigword7 "$SITE/bigp/7.html" "a 5 MiB page's content is indexed"
expect_hit bigtext "$SITE/bigp/text.txt" "the 5 MiB text file's content is indexed"
echo "peak RSS: $((rss / 1024)) MiB after the indexed crawl"
[ "$rss" -lt $((base_rss + 64 * 1024)) ] &&
    ok "with the processing after the crawler the peak RSS grew by $(((rss - base_rss) / 1024)) MiB, less than 64 MiB" ||
    fail "peak RSS grew by $(((rss - base_rss) / 1024)) MiB ($((rss / 1024)) MiB)"

: >"$SITE_LOG"
expect_crawl webBig "re-crawl SUCCEEDED"
expect_requests '/bigp/[0-9]*.html' = 16 "the pages without validator were fetched again"
[ "$(counter records.pushed)" = 0 ] && [ "$(counter entries.removed)" = 0 ] &&
    ok "nothing pushed or deleted: the streamed SHA-256 is stable" ||
    fail "pushed $(counter records.pushed), removed $(counter entries.removed)"

stop_server
finish
