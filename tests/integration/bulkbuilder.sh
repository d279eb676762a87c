#!/bin/bash
# The bulkbuilder push API (docs/bulkbuilder.md) against the real server
# with the repository's indexUpdate job: JSON, multipart and JSON-lines
# pushes, deletes, every malformed input answered with a 4xx naming what is
# wrong, acknowledged records surviving kill -9 (also with a torn
# record at the journal's end, which was never acknowledged), and a record
# refused halfway (two attachments of one name) cut back out of the
# journal while the records around it are indexed, and the open bulk
# sealed when a crawl run that pushed into it ends.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"

import_config "$TMP/config.json" '.bulkbuilder = {"bulkLimitTimeMs": 3600000}'
start_server --config "$TMP/config.json" --data-dir "$TMP/data"

# ---- malformed input
req POST /smila/job/indexUpdate/record -d '{"title": "no id"}'
expect_error 400 INVALID_INPUT "a record without _recordid"
expect_jq '.error.field == "_recordid"' "the error names _recordid"
req POST /smila/job/indexUpdate/record -d '{"_recordid": ""}'
expect_error 400 INVALID_INPUT "an empty _recordid"
req POST /smila/job/indexUpdate/record -d '[1, 2]'
expect_error 400 INVALID_INPUT "a record that is not an object"
req POST /smila/job/indexUpdate/record -d '{"_recordid": "x",'
expect_error 400 MALFORMED_JSON "malformed JSON"
req POST /smila/job/indexUpdate/record
expect_error 400 MALFORMED_JSON "an empty body"
req POST /smila/job/noSuchJob/record -d '{"_recordid": "x"}'
expect_error 404 NOT_FOUND "an unknown job"
req POST /smila/jobmanager/jobs/ -H 'Content-Type: application/json' \
    -d "{\"name\": \"crawlX\", \"workflow\": \"fileCrawling\", \"parameters\": {\"dataSource\": \"x\", \"rootFolder\": \"$TMP\", \"jobToPushTo\": \"indexUpdate\"}}"
req POST /smila/job/crawlX/record -d '{"_recordid": "x"}'
expect_error 503 NOT_READY "a job that is not running"
req DELETE /smila/job/indexUpdate/record
expect_error 400 INVALID_INPUT "a delete without _recordid"
expect_jq '.error.field == "_recordid"' "the delete error names _recordid"
printf '{"_recordid": "b1"}\n{"_recordid": "b2"\n{"_recordid": "b3"}\n' >"$TMP/bad.jsonl"
req POST /smila/job/indexUpdate/bulk --data-binary @"$TMP/bad.jsonl"
expect_error 400 MALFORMED_JSON "a bulk with a bad line"
expect_jq '.error.field == "line 2"' "the error names line 2"
printf '{"_recordid": "b1"}\n{"x": 1}\n' >"$TMP/bad2.jsonl"
req POST /smila/job/indexUpdate/bulk --data-binary @"$TMP/bad2.jsonl"
expect_error 400 INVALID_INPUT "a bulk line without _recordid"
expect_jq '.error.field == "line 2"' "the error names line 2 again"
req POST /smila/job/indexUpdate/bulk --data-binary $'\n\n'
expect_error 400 INVALID_INPUT "an empty bulk"
req POST /smila/job/indexUpdate/record -F 'record={"_recordid": ;type=application/json'
expect_error 400 MALFORMED_JSON "multipart whose first part is not JSON"
req GET /smila/bulkbuilder/
expect_jq '[.jobs[] | .acceptedRecords] | add // 0 | . == 0' "nothing was accepted by the bad requests"

# ---- good pushes: JSON, multipart with an attachment, JSON lines
req POST /smila/job/indexUpdate/record -d '{"_recordid": "r1", "title": "One", "text": "papa one", "_visited": 1}'
expect_status 202 "a JSON record"
expect_jq '._recordid == "r1"' "202 names the record"
printf '<html><head><title>Quebec</title></head><body>quebec romeo</body></html>' >"$TMP/q.html"
req POST /smila/job/indexUpdate/record \
    -F 'record={"_recordid": "m1", "fileName": "q.html", "fileExtension": "html"};type=application/json' \
    -F "fileContent=@$TMP/q.html"
expect_status 202 "a multipart record with an attachment"
: >"$TMP/many.jsonl"
for i in $(seq 1 300); do echo "{\"_recordid\": \"n$i\", \"text\": \"sierra $i\"}" >>"$TMP/many.jsonl"; done
req POST /smila/job/indexUpdate/bulk --data-binary @"$TMP/many.jsonl"
expect_status 202 "a bulk of 300"
expect_jq '.accepted == 300' "300 accepted"
req DELETE "/smila/job/indexUpdate/record?_recordid=n300"
expect_status 202 "a delete"
req GET /smila/bulkbuilder/
expect_jq '.jobs[] | select(.job == "indexUpdate") | .openRecords == 303 and .pendingBulks == 0' \
    "303 records wait in the open journals (bulkLimitTimeMs is an hour)"

# ---- kill -9 with the records only in the journals; a torn record at
# the end of one journal (a crash in the middle of an append).
kill -KILL "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null || true
SERVER_PID=""
J="$TMP/data/bulkbuilder/j.indexUpdate/open-insertedRecords.journal"
printf 'SLRC\x40\x00\x00\x00{"_recordid":"torn"' >>"$J"
start_server --config "$TMP/config.json" --data-dir "$TMP/data"
grep -q "recovered 302 record(s) of insertedRecords" "$TMP/server.log" &&
    ok "302 acknowledged adds recovered, the torn record dropped" ||
    fail "recovery: $(grep bulkbuilder "$TMP/server.log")"
wait_indexed && ok "the processing job caught up" || fail "the processing job did not catch up"
req GET /smila/index/default/
expect_jq '.documentCount == 301' "301 documents: 302 adds minus the delete"
req GET /smila/index/default/n300
expect_status 404 "the deleted record is not in the index"
req GET /smila/index/default/r1
expect_jq '.title == "One" and .text == "papa one"' "a JSON record keeps its own title and text"
expect_jq 'has("_visited") | not' "_visited (the webCrawler's own mark) is dropped from a pushed record"
req GET /smila/index/default/m1
expect_jq '.title == "Quebec" and .mimeType == "text/html"' "the multipart attachment was extracted (title, MIME type)"
"$SLUICE" search --server "$BASE" romeo >"$TMP/hits" 2>/dev/null
grep -q "^[-0-9.]*	m1	" "$TMP/hits" && ok "the attachment's text is searchable" || fail "search romeo: $(cat "$TMP/hits")"
"$SLUICE" search --server "$BASE" torn >"$TMP/hits" 2>/dev/null
[ ! -s "$TMP/hits" ] && ok "the torn record is not indexed" || fail "torn found: $(cat "$TMP/hits")"

# ---- a record refused after its metadata went to the journal: the journal
# is cut back to where it began and sealed, the records before it stay
req POST /smila/job/indexUpdate/record -d '{"_recordid": "k1", "text": "kilo one"}'
expect_status 202 "a record before the refused one"
req POST /smila/job/indexUpdate/record \
    -F 'record={"_recordid": "dup"};type=application/json' \
    -F "same=@$TMP/q.html" -F "same=@$TMP/q.html"
expect_error 400 INVALID_INPUT "a record with two attachments of one name"
req POST /smila/job/indexUpdate/record -d '{"_recordid": "k2", "text": "kilo two"}'
expect_status 202 "a record after the refused one"
req GET /smila/bulkbuilder/
expect_jq '.jobs[] | select(.job == "indexUpdate") | .openRecords == 1' \
    "k2 waits in a new journal (k1's was sealed)"

# ---- recovery of sealed bulks, planted while the server is down: one whose
# task the jobmanager does not know (lost before it was finished: it must
# go into a new task) and one marked done (finished: only removed).
stop_server
JD="$TMP/data/bulkbuilder/j.indexUpdate"
printf '{"_recordid": "lost-1", "text": "tango lost"}\n{"_recordid": "lost-2", "text": "tango lost"}\n' >"$TMP/lost.jsonl"
"$SLUICE" bulk from-jsonl "$TMP/lost.jsonl" "$JD/00000000000000000900-insertedRecords.bulk"
echo '{"taskId": "no-such-task", "output": {}}' >"$JD/00000000000000000900.task"
printf '{"_recordid": "done-1", "text": "uniform done"}\n' >"$TMP/done.jsonl"
"$SLUICE" bulk from-jsonl "$TMP/done.jsonl" "$JD/00000000000000000901-insertedRecords.bulk"
echo '{"taskId": "finished-task"}' >"$JD/00000000000000000901.done"
start_server --config "$TMP/config.json" --data-dir "$TMP/data"
wait_indexed || fail "the processing job did not catch up after the restart"
req GET /smila/index/default/lost-2
expect_jq '.text == "tango lost"' "a bulk whose task was lost is committed in a new task"
req GET /smila/index/default/k2
expect_jq '.text == "kilo two"' "the record after the refused one is indexed"
req GET /smila/index/default/k1
expect_jq '.text == "kilo one"' "the record before the refused one is indexed"
req GET /smila/index/default/dup
expect_status 404 "the refused record is not in the index"
req GET /smila/index/default/done-1
expect_status 404 "a bulk marked done is not committed again"
[ -z "$(ls "$JD" | grep -E '^0+90[01]')" ] && ok "both bulks' files are gone" || fail "left: $(ls "$JD")"

# ---- a crash between a seal's link and the removal of the journal's name:
# the journal is a second name of the sealed bulk, which the store may
# share by now (a hard link).  At start the name is dropped; recovering it
# would cut the bulk's trailer off, in the store's object too, and commit
# its records in a second bulk.
stop_server
printf '{"_recordid": "seal-1", "text": "victor sealed"}\n{"_recordid": "seal-2", "text": "victor sealed"}\n' >"$TMP/sealed.jsonl"
"$SLUICE" bulk from-jsonl "$TMP/sealed.jsonl" "$JD/00000000000000000902-insertedRecords.bulk"
[ -e "$JD/open-insertedRecords.journal" ] && fail "a journal was open before the planting"
ln "$JD/00000000000000000902-insertedRecords.bulk" "$JD/open-insertedRecords.journal"
start_server --config "$TMP/config.json" --data-dir "$TMP/data"
wait_indexed || fail "the processing job did not catch up after the restart"
req GET /smila/index/default/seal-2
expect_jq '.text == "victor sealed"' "a bulk sealed just before a crash is committed"
grep -q "recovered 2 record(s)" "$TMP/server.log" &&
    fail "the journal name of a sealed bulk was recovered as a journal: $(grep bulkbuilder "$TMP/server.log")" ||
    ok "the journal name of a sealed bulk is dropped, not recovered again"
[ -z "$(ls "$JD" | grep -E '^0+90[23]|journal')" ] && ok "no bulk or journal file is left" || fail "left: $(ls "$JD")"

# ---- a crawl run that ends seals the open bulk its updatePusher pushed
# into (the run end hook): the time limit is an hour, so without the seal
# its records would wait in the journal
mkdir -p "$TMP/tree"
for i in 1 2 3; do echo "lima $i" >"$TMP/tree/l$i.txt"; done
define_crawl crawlSeal "$(realpath "$TMP/tree")" seal
start_run crawlSeal
wait_run crawlSeal "$RUN" && ok "the crawl run succeeded" || fail "the crawl run: $(jq -c '{state, worker}' "$RUNJSON")"
req GET /smila/bulkbuilder/
expect_jq '.jobs[] | select(.job == "indexUpdate") | .openRecords == 0 and .pendingBulks == 0' \
    "the crawl run's end sealed the open bulk (bulkLimitTimeMs is an hour)"
snapshot "$TMP/seal.tsv"
n=$(grep -c "/tree/l[123].txt" "$TMP/seal.tsv" || true)
[ "$n" = 3 ] && ok "the 3 crawled files are indexed" || fail "indexed: $n of 3"

# ---- a stopped job refuses records; sealed bulks wait for its next run
CUR=$(curl -sS "$BASE/smila/jobmanager/jobs/indexUpdate/" | jq -r .runs.current)
req POST "/smila/jobmanager/jobs/indexUpdate/$CUR/finish/"
expect_status 200 "finish the processing run"
for i in $(seq 1 100); do
    st=$(curl -sS "$BASE/smila/jobmanager/jobs/indexUpdate/$CUR/" | jq -r .state)
    [ "$st" = SUCCEEDED ] && break
    sleep 0.1
done
req POST /smila/job/indexUpdate/record -d '{"_recordid": "late"}'
expect_error 503 NOT_READY "a finished job refuses records"
stop_server
finish
