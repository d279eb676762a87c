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
. "$(dirname "$0")/web_lib.sh"

SPOOL="$TMP/spool"
mkdir -p "$SPOOL"
MUTATE="$TMP/mutate.json"
start_site site --mutate-file "$MUTATE" --archives

import_config "$TMP/config.json" '.jobmanager.maxRetries = 1'
TMPDIR="$SPOOL" start_server --config "$TMP/config.json" --data-dir "$TMP/data"

define_web webTmp "$SITE" webtmp '.deltaImportStrategy = "full" | .filters.maxSize = 200000'

expect_crawl webTmp "crawl 1 SUCCEEDED"
wait_indexed
index_ids "$TMP/ids1"
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
expect_counter links.failed.internal = 0 "the download is not dropped as an internal failure"
expect_counter entries.removed = 0 "no delta entry removed"
expect_index "$TMP/ids1" "the compound and its elements stay indexed"
grep -q "temporary file" "$TMP/server.log" && ok "the task message names the temporary file" ||
    fail "no 'temporary file' in the server log"
rm -f "$MUTATE"

stop_server
finish
