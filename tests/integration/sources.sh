#!/bin/bash
# Documents that several sources reach, and purging a source.  Jobs A and
# B crawl the same folder under sources srcA and srcB:
# 1. each document is held by both (GET of the document: "_sources");
# 2. B is redefined so that shared.txt leaves its scope: B's full crawl
#    deletes it from srcB only, the document stays for srcA;
# 3. a delete pushed through the bulkbuilder with _source removes that
#    source only, one without removes the document outright;
# 4. deleting job A without purge keeps its documents and the reply says so;
# 5. `sluice source purge srcA`: srcA's delta is forgotten, shared.txt
#    (held by srcA alone) leaves the index, both.txt stays for srcB; a bad
#    purge value is a 400;
# 6. DELETE of job B with ?purge=true, then kill -9 at once: after the
#    restart the purge is carried out, both.txt is gone, and so is job B;
# 7. a job that cannot be deleted (the predefined crawlFilesystem) with
#    ?purge=true is refused before anything is purged: its source "file"
#    keeps its documents;
# 8. kill -9 in the middle of a purge, after the delta entries are
#    forgotten and before the documents go (SLUICE_TEST_DELAY
#    purge.forgotten): meanwhile a crawl of the source is refused (409);
#    the next start carries the purge out before it serves requests;
# 9. a purge while no processing job runs deletes the documents from the
#    index directly.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"

F="$TMP/folder"
mkdir -p "$F"
F=$(realpath "$F")
echo "hotel shared" >"$F/shared.txt"
echo "juliet both" >"$F/both.txt"
echo "kilo other" >"$F/other.txt"

import_config "$TMP/config.json"
start_server --config "$TMP/config.json" --data-dir "$TMP/data"
define_crawl crawlA "$F" srcA
define_crawl crawlB "$F" srcB

# doc NAME: GET the document of $F/NAME into $BODY.
doc() {
    req GET "/smila/index/default/$(jq -rn --arg id "$F/$1" '$id|@uri')"
}
# sources NAME: its sources, comma-separated ("" when it is not indexed).
sources() {
    doc "$1"
    if [ "$STATUS" = 200 ]; then jq -r '._sources | join(",")' "$BODY"; else echo ""; fi
}

crawl crawlA || fail "crawl A: $(cat "$TMP/crawl.err")"
crawl crawlB || fail "crawl B: $(cat "$TMP/crawl.err")"
[ "$(sources shared.txt)" = "srcA,srcB" ] && [ "$(sources both.txt)" = "srcA,srcB" ] &&
    ok "1: each document is held by srcA and srcB" || fail "1: shared.txt: $(sources shared.txt)"

# ---- 2. shared.txt leaves B's scope
define_crawl crawlB "$F" srcB '{"filters": {"filePatterns": {"exclude": ["^shared\\.txt$"]}}}'
crawl crawlB || fail "crawl B again: $(cat "$TMP/crawl.err")"
[ "$(counter records.deleted)" = 1 ] && ok "2: B's delta-delete sent shared.txt's delete" ||
    fail "2: records.deleted $(counter records.deleted)"
[ "$(sources shared.txt)" = "srcA" ] && ok "2: shared.txt stays in the index, held by srcA" ||
    fail "2: shared.txt sources '$(sources shared.txt)'"
crawl crawlA || fail "crawl A again"
[ "$(sources shared.txt)" = "srcA" ] && ok "2: A's next crawl keeps it" || fail "2: after A: '$(sources shared.txt)'"

# ---- 3. deletes pushed by a client
idq=$(jq -rn --arg id "$F/other.txt" '$id|@uri')
req DELETE "/smila/job/indexUpdate/record/?_recordid=$idq&_source=srcB"
expect_status 202 "3: a delete of other.txt from srcB is accepted"
wait_indexed
[ "$(sources other.txt)" = "srcA" ] && ok "3: a delete with _source removes that source only" ||
    fail "3: other.txt sources '$(sources other.txt)'"
req DELETE "/smila/job/indexUpdate/record/?_recordid=$idq"
expect_status 202 "3: a delete of other.txt without _source is accepted"
wait_indexed
doc other.txt
expect_status 404 "3: a delete without _source removes the document outright"

# ---- 4. job A deleted without purge
req DELETE /smila/jobmanager/jobs/crawlA/
expect_status 200 "4: job A deleted"
expect_jq '.documents | test("kept: source .srcA. keeps its [0-9]+ delta entries")' \
    "4: the reply says srcA's documents stay and how to purge them"
[ "$(sources shared.txt)" = "srcA" ] && ok "4: shared.txt is still indexed" || fail "4: '$(sources shared.txt)'"

# ---- 5. purge srcA
req DELETE "/smila/importing/delta/srcA/?purge=maybe"
expect_error 400 INVALID_INPUT "5: purge=maybe"
"$SLUICE" source purge srcA --server "$BASE" >"$TMP/purge.out" 2>&1 &&
    ok "5: sluice source purge srcA: $(cat "$TMP/purge.out")" || fail "5: purge: $(cat "$TMP/purge.out")"
wait_indexed
req GET /smila/importing/delta/srcA/
expect_status 404 "5: srcA has no delta entries left"
doc shared.txt
expect_status 404 "5: shared.txt, held by srcA alone, left the index"
[ "$(sources both.txt)" = "srcB" ] && ok "5: both.txt stays, held by srcB" || fail "5: both.txt '$(sources both.txt)'"

# ---- 6. job B deleted with purge, then kill -9
req DELETE "/smila/jobmanager/jobs/crawlB/?purge=true"
expect_status 200 "6: job B deleted with purge"
expect_jq '.purge.purged == true and (.purge.processingJobs | index("indexUpdate") != null)' \
    "6: the reply says srcB is purged through indexUpdate"
kill9_restart "$TMP/data"
wait_indexed || fail "6: not indexed after the restart"
sleep 0.5
wait_indexed || true
doc both.txt
expect_status 404 "6: after kill -9 and a restart, srcB's purge is carried out"
req GET /smila/jobmanager/jobs/crawlB/
expect_status 404 "6: job B is gone"
req GET /smila/index/default/
expect_jq '.documentCount == 0' "6: the index is empty"

# ---- 7. a predefined job with ?purge=true
define_crawl crawlF "$F" file
crawl crawlF || fail "7: crawl F: $(cat "$TMP/crawl.err")"
req DELETE "/smila/jobmanager/jobs/crawlFilesystem/?purge=true"
[ "${STATUS:0:1}" = 4 ] && jq -e '.error.message | test("predefined")' "$BODY" >/dev/null &&
    ok "7: deleting predefined crawlFilesystem with purge is refused ($STATUS: $(jq -r .error.message "$BODY"))" ||
    fail "7: $STATUS $(cat "$BODY")"
[ "$(sources both.txt)" = "file" ] && ok "7: source file keeps its documents" || fail "7: both.txt '$(sources both.txt)'"
req GET /smila/importing/delta/file/
expect_status 200 "7: source file keeps its delta entries"

# ---- 8. kill -9 in the middle of a purge
SLUICE_TEST_DELAY=purge.forgotten=5000 kill9_restart "$TMP/data"
curl -sS -X DELETE "$BASE/smila/importing/delta/file/?purge=true" >/dev/null 2>&1 &
PURGE=$!
for i in $(seq 1 100); do
    [ "$(curl -sS -o /dev/null -w '%{http_code}' "$BASE/smila/importing/delta/file/")" = 404 ] && break
    sleep 0.05
done
req POST /smila/jobmanager/jobs/crawlF/ -d '{"mode": "runOnce"}'
[ "$STATUS" = 409 ] && jq -e '.error.message | test("being purged")' "$BODY" >/dev/null &&
    ok "8: a crawl of the source is refused while it is purged" || fail "8: start during the purge: $STATUS $(cat "$BODY")"
kill9_restart "$TMP/data"
wait "$PURGE" 2>/dev/null || true
for i in $(seq 1 100); do
    [ "$(sources both.txt)" = "" ] && break
    sleep 0.1
done
grep -q "the purge a stop interrupted goes on" "$TMP/server.log" &&
    ok "8: the restarted server carries on the interrupted purge" || fail "8: the log does not say so"
doc both.txt
expect_status 404 "8: the documents of source file are gone after the restart"
for f in shared.txt other.txt; do
    doc "$f"
    expect_status 404 "8: $f is gone too"
done

# ---- 9. a purge while no processing job runs
crawl crawlF || fail "9: crawl F: $(cat "$TMP/crawl.err")"
[ "$(sources both.txt)" = "file" ] && ok "9: source file's documents are back" || fail "9: '$(sources both.txt)'"
CUR=$(curl -sS "$BASE/smila/jobmanager/jobs/indexUpdate/" | jq -r .runs.current)
req POST "/smila/jobmanager/jobs/indexUpdate/$CUR/finish/"
for i in $(seq 1 100); do
    [ "$(curl -sS "$BASE/smila/jobmanager/jobs/indexUpdate/" | jq -r '.runs.current // "none"')" = none ] && break
    sleep 0.1
done
req DELETE "/smila/importing/delta/file/?purge=true"
expect_status 200 "9: the purge is accepted with no processing job running"
expect_jq '(.processingJobs | length) == 0 and .indexes == [{"index": "default", "deleted": 3, "kept": 0}]' \
    "9: the reply names the index it purged directly"
req GET /smila/index/default/
expect_jq '.documentCount == 0' "9: the index is empty"

stop_server
finish
