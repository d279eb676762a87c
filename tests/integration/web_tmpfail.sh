#!/bin/bash
# webExtractor when its temporary file cannot be made (item 3 of the
# webCrawler review): a compound download that cannot open its spool file
# is no lost link but a recoverable task failure.  Dropped, the task
# SUCCEEDED and with `full` the compound and its elements were
# delta-deleted.
# 1. a crawl with compounds, TMPDIR of the server present: SUCCEEDED;
# 2. TMPDIR removed, /arc/site.zip changed (the extractor must download
#    it): the extractor task fails (retried once, maxRetries 1), the run
#    does not succeed, nothing is deleted (site.zip and its elements stay
#    indexed), no links.failed.internal.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"

SPOOL="$TMP/spool"
mkdir -p "$SPOOL"
MUTATE="$TMP/mutate.json"
python3 "$SRC/tests/integration/web_site.py" --port-file "$TMP/site.port" \
    --log "$TMP/access.log" --mutate-file "$MUTATE" --archives &
SITE_PID=$!
trap 'kill $SITE_PID 2>/dev/null; cleanup' EXIT
for _ in $(seq 1 100); do [ -s "$TMP/site.port" ] && break; sleep 0.05; done
SITE="http://127.0.0.1:$(cat "$TMP/site.port")"

import_config "$TMP/config.json" '.jobmanager.maxRetries = 1'
TMPDIR="$SPOOL" start_server --config "$TMP/config.json" --data-dir "$TMP/data"

params=$(jq -cn --arg url "$SITE/" --arg inc "^$SITE/" \
    '{dataSource: "webtmp", startUrl: $url, jobToPushTo: "indexUpdate",
      deltaImportStrategy: "full",
      filters: {urlPatterns: {include: [$inc]}, maxSize: 200000},
      politeness: {delayMs: 0, maxConnectionsPerHost: 4}}')
req POST /smila/jobmanager/jobs/ -H 'Content-Type: application/json' \
    -d "{\"name\": \"webTmp\", \"workflow\": \"webCrawling\", \"parameters\": $params}"
[ "$STATUS" = 200 ] || fail "define: $STATUS $(cat "$BODY")"

if crawl webTmp; then ok "crawl 1 SUCCEEDED"; else fail "crawl 1: $(cat "$TMP/crawl.err")"; fi
wait_indexed
snapshot "$TMP/s1"
ids "$TMP/s1" | LC_ALL=C sort >"$TMP/ids1"
grep -qxF "$SITE/arc/site.zip!/a.txt" "$TMP/ids1" && ok "site.zip's elements are indexed" ||
    fail "no $SITE/arc/site.zip!/a.txt in the index"

rmdir "$SPOOL" || fail "the spool dir is not empty: $(ls -A "$SPOOL")"
echo '{"change": ["/arc/site.zip"]}' >"$MUTATE"
if crawl webTmp; then
    fail "crawl 2 SUCCEEDED without a temporary file for site.zip"
else
    ok "crawl 2 does not succeed ($(jq -r .state "$RUNJSON"))"
fi
wait_indexed
[ "$(counter links.failed.internal)" = 0 ] && ok "the download is not dropped as an internal failure" ||
    fail "links.failed.internal = $(counter links.failed.internal)"
[ "$(counter entries.removed)" = 0 ] && ok "no delta entry removed" ||
    fail "entries.removed = $(counter entries.removed)"
snapshot "$TMP/s2"
ids "$TMP/s2" | LC_ALL=C sort >"$TMP/ids2"
if diff "$TMP/ids1" "$TMP/ids2" >"$TMP/diff"; then
    ok "the compound and its elements stay indexed"
else
    fail "index ids changed: $(head -c 1200 "$TMP/diff")"
fi
grep -q "temporary file" "$TMP/server.log" && ok "the task message names the temporary file" ||
    fail "no 'temporary file' in the server log"
rm -f "$MUTATE"

stop_server
finish
