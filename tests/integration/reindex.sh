#!/bin/bash
# Re-indexing a source (issue 25, docs/deltaservice.md "Re-indexing a
# source"): DELETE /smila/importing/delta/<source>/ marks the source's
# entries for re-push instead of forgetting what was indexed.
# 1. A folder of two files and a zip of two members is crawled (full);
#    an unchanged re-crawl pushes nothing (the fileCrawler's pre-check).
# 2. The source's delta is cleared: its entries stay, all invalidated.
#    One file is removed and the folder crawled again: every remaining
#    file and member is pushed again (found CHANGED by the fileCrawler's
#    pre-check and the deltaChecker, the zip's members by the
#    updatePusher's element check), the removed file's document is deleted
#    by the delta-delete, and the delta counts the remaining records.
# 3. DELETE /smila/importing/delta/ (every source) does the same.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"

# pusher NAME: the updatePusher's counter NAME in the last run.
pusher() {
    jq --arg n "$1" '[.worker | to_entries[] | select(.key | endswith("_updatePusher"))
        | .value[$n] // 0] | add // 0' "$RUNJSON"
}

# expect_ids WANT-FILE DESCRIPTION: the ids of index "default".
expect_ids() {
    wait_indexed
    snapshot "$TMP/snap"
    ids "$TMP/snap" >"$TMP/got"
    diff "$1" "$TMP/got" >"$TMP/diff" && ok "$2" || fail "$2: $(cat "$TMP/diff")"
}

import_config "$TMP/config.json"
start_server --config "$TMP/config.json" --data-dir "$TMP/data"

M="$TMP/members"
F="$TMP/folder"
mkdir -p "$M" "$F"
F=$(realpath "$F")
echo "apple words" >"$F/a.txt"
echo "banana words" >"$F/b.txt"
echo "cherry member" >"$M/m1.txt"
echo "damson member" >"$M/m2.txt"
(cd "$M" && zip -q "$F/pack.zip" m1.txt m2.txt)
touch -d '2024-03-01 10:00:00' "$F"/*
printf '%s\n' "$F/a.txt" "$F/b.txt" "$F/pack.zip" "$F/pack.zip!/m1.txt" \
    "$F/pack.zip!/m2.txt" | LC_ALL=C sort >"$TMP/want_all"
grep -v '/b\.txt$' "$TMP/want_all" >"$TMP/want_rest"

# ---- 1. the first crawl, and an unchanged one
define_crawl crawlRe "$F" re '{"deltaImportStrategy": "full"}'
if crawl crawlRe; then ok "first run SUCCEEDED"; else fail "first run failed"; fi
[ "$(pusher records.pushed)" = 5 ] && ok "first run pushed 2 files, the zip and its 2 members" ||
    fail "first run pushed $(pusher records.pushed), want 5"
expect_ids "$TMP/want_all" "first run: all 5 documents indexed"
req GET /smila/importing/delta/re/
expect_jq '.entryCount == 5 and .invalidatedCount == 0' "5 delta entries, none invalidated"
if crawl crawlRe; then ok "unchanged run SUCCEEDED"; else fail "unchanged run failed"; fi
[ "$(pusher records.pushed)" = 0 ] && [ "$(counter files.uptodate)" = 3 ] &&
    ok "unchanged run: the pre-check finds the 3 files up to date, nothing pushed" ||
    fail "unchanged run: pushed $(pusher records.pushed), files.uptodate $(counter files.uptodate)"

# ---- 2. clear the source, remove a file, crawl again
req DELETE /smila/importing/delta/re/
expect_status 200 "clear the delta of source re"
expect_jq '.source == "re" and .cleared == true' "clear answer"
req GET /smila/importing/delta/re/
expect_status 200 "the cleared source still has its entries"
expect_jq '.entryCount == 5 and .invalidatedCount == 5' "5 entries, all invalidated"
req GET /smila/importing/delta/
expect_jq '[.sources[] | select(.source == "re") | .entryCount] == [5]' "the list still shows source re"
rm "$F/b.txt"
if crawl crawlRe; then ok "re-index run SUCCEEDED"; else fail "re-index run failed"; fi
[ "$(counter files.uptodate)" = 0 ] && ok "re-index: the pre-check finds no file up to date" ||
    fail "re-index: files.uptodate $(counter files.uptodate), want 0"
[ "$(counter records.changed)" = 2 ] && [ "$(counter records.new)" = 0 ] &&
    ok "re-index: the deltaChecker finds a.txt and the zip CHANGED" ||
    fail "re-index: records.changed $(counter records.changed), records.new $(counter records.new), want 2 and 0"
[ "$(pusher records.pushed)" = 4 ] && [ "$(pusher elements.uptodate)" = 0 ] &&
    ok "re-index: every remaining file and member pushed again" ||
    fail "re-index: pushed $(pusher records.pushed) (want 4), elements.uptodate $(pusher elements.uptodate)"
[ "$(pusher records.deleted)" = 1 ] && ok "re-index: the removed file is delta-deleted" ||
    fail "re-index: deleted $(pusher records.deleted), want 1"
expect_ids "$TMP/want_rest" "re-index: the removed file's document left the index"
req GET /smila/importing/delta/re/
expect_jq '.entryCount == 4 and .invalidatedCount == 0' "re-index: 4 delta entries, none invalidated"

# ---- 3. clear every source
req DELETE /smila/importing/delta/
expect_status 200 "clear the delta of every source"
req GET /smila/importing/delta/re/
expect_jq '.entryCount == 4 and .invalidatedCount == 4' "every source: 4 entries, all invalidated"
if crawl crawlRe; then ok "second re-index run SUCCEEDED"; else fail "second re-index run failed"; fi
[ "$(pusher records.pushed)" = 4 ] && [ "$(pusher records.deleted)" = 0 ] &&
    ok "every source: all 4 pushed again, nothing deleted" ||
    fail "every source: pushed $(pusher records.pushed), deleted $(pusher records.deleted), want 4 and 0"
expect_ids "$TMP/want_rest" "every source: the index keeps the 4 documents"
req GET /smila/importing/delta/re/
expect_jq '.entryCount == 4 and .invalidatedCount == 0' "every source: 4 delta entries again"

stop_server
finish
