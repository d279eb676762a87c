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

SITE_LOG="$TMP/access.log"
python3 "$SRC/tests/integration/web_site.py" --port-file "$TMP/site.port" \
    --log "$SITE_LOG" --pages 8 --big 16 &
SITE_PID=$!
trap 'kill $SITE_PID 2>/dev/null; cleanup' EXIT
for _ in $(seq 1 100); do [ -s "$TMP/site.port" ] && break; sleep 0.05; done
SITE="http://127.0.0.1:$(cat "$TMP/site.port")"

import_config "$TMP/config.json"
# under AddressSanitizer freed memory waits in a quarantine (256 MiB) and
# counts in the RSS: keep it small, so the peak shows what is held
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=1"
start_server --config "$TMP/config.json" --data-dir "$TMP/data"
base_rss=$(server_peak_rss_kib)

# ---- 1. the crawler alone (a workflow without the processing after
# it): its own memory
req POST /smila/jobmanager/workflows/ -H 'Content-Type: application/json' -d '{
  "name": "webCrawlOnly", "modes": ["runOnce"], "parameters": {"tempStore": "temp"},
  "startAction": {"worker": "webCrawler",
    "input": {"linksToCrawl": "linksToCrawlBucket"},
    "output": {"linksToCrawl": "linksToCrawlBucket", "crawledRecords": "crawledOnlyBucket"}}}'
expect_status 200 "a workflow with the webCrawler only"
define() { # NAME WORKFLOW SOURCE
    local params
    params=$(jq -cn --arg url "$SITE/" --arg inc "^$SITE/" --arg src "$3" \
        '{dataSource: $src, startUrl: $url, jobToPushTo: "indexUpdate",
          filters: {urlPatterns: {include: [$inc]}},
          politeness: {delayMs: 0, maxConnectionsPerHost: 16, parallelTransfers: 16}}')
    req POST /smila/jobmanager/jobs/ -H 'Content-Type: application/json' \
        -d "{\"name\": \"$1\", \"workflow\": \"$2\", \"parameters\": $params}"
    [ "$STATUS" = 200 ] || { fail "define $1: $STATUS $(cat "$BODY")"; return 1; }
}
define webBigOnly webCrawlOnly bigonly
if crawl webBigOnly; then ok "crawl-only run SUCCEEDED"; else fail "crawl-only: $(cat "$TMP/crawl.err")"; fi
rss=$(server_peak_rss_kib)
[ "$(counter records.crawled)" = 45 ] && ok "every page and resource crawled (45 records)" ||
    fail "records.crawled = $(counter records.crawled)"
[ "$(grep -c ' /bigp/child[0-9]*.html$' "$SITE_LOG")" = 16 ] &&
    ok "the links at the end of the 5 MiB pages were followed" ||
    fail "child requests: $(grep -c ' /bigp/child[0-9]*.html$' "$SITE_LOG")"
echo "peak RSS: $((base_rss / 1024)) MiB after start, $((rss / 1024)) MiB after the crawl-only run"
[ "$rss" -lt $((base_rss + 32 * 1024)) ] &&
    ok "the crawler's peak RSS grew by $(((rss - base_rss) / 1024)) MiB, less than 32 MiB for 80 MiB of bodies in flight" ||
    fail "the crawler's peak RSS grew by $(((rss - base_rss) / 1024)) MiB ($((rss / 1024)) MiB)"

# ---- 2. the whole webCrawling workflow: indexed
: >"$SITE_LOG"
define webBig webCrawling big
if crawl webBig; then ok "crawl SUCCEEDED"; else fail "crawl: $(cat "$TMP/crawl.err")"; fi
rss=$(server_peak_rss_kib)
snapshot "$TMP/snap"
ids "$TMP/snap" | LC_ALL=C sort >"$TMP/got"
{
    python3 "$SRC/tests/integration/web_site.py" --pages 8 --expected
    for i in $(seq 0 15); do echo "/bigp/$i.html"; echo "/bigp/child$i.html"; done
    echo /bigp/text.txt
} | sed "s|^|$SITE|" | LC_ALL=C sort >"$TMP/want"
if diff "$TMP/want" "$TMP/got" >"$TMP/diff"; then
    ok "every page is indexed, the children linked at the end of the 5 MiB pages too ($(wc -l <"$TMP/want"))"
else
    fail "index differs: $(head -c 800 "$TMP/diff")"
fi
[ "$(grep -c ' /bigp/[0-9]*.html$' "$SITE_LOG")" = 16 ] && ok "each big page was fetched once" ||
    fail "big page requests: $(grep -c ' /bigp/[0-9]*.html$' "$SITE_LOG")"
"$SLUICE" search --server "$BASE" bigword7 >"$TMP/hits" 2>/dev/null
grep -qF "$SITE/bigp/7.html" "$TMP/hits" && ok "a 5 MiB page's content is indexed" ||
    fail "search bigword7: $(cat "$TMP/hits")"
"$SLUICE" search --server "$BASE" bigtext >"$TMP/hits" 2>/dev/null
grep -qF "$SITE/bigp/text.txt" "$TMP/hits" && ok "the 5 MiB text file's content is indexed" ||
    fail "search bigtext: $(cat "$TMP/hits")"
echo "peak RSS: $((rss / 1024)) MiB after the indexed crawl"
[ "$rss" -lt $((base_rss + 64 * 1024)) ] &&
    ok "with the processing after the crawler the peak RSS grew by $(((rss - base_rss) / 1024)) MiB, less than 64 MiB" ||
    fail "peak RSS grew by $(((rss - base_rss) / 1024)) MiB ($((rss / 1024)) MiB)"

: >"$SITE_LOG"
if crawl webBig; then ok "re-crawl SUCCEEDED"; else fail "re-crawl: $(cat "$TMP/crawl.err")"; fi
[ "$(grep -c ' /bigp/[0-9]*.html$' "$SITE_LOG")" = 16 ] && ok "the pages without validator were fetched again" ||
    fail "big page requests: $(grep -c ' /bigp/[0-9]*.html$' "$SITE_LOG")"
[ "$(counter records.pushed)" = 0 ] && [ "$(counter entries.removed)" = 0 ] &&
    ok "nothing pushed or deleted: the streamed SHA-256 is stable" ||
    fail "pushed $(counter records.pushed), removed $(counter entries.removed)"

stop_server
finish
