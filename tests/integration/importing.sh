#!/bin/bash
# The importing REST API of the delta service: sources with entry counts
# per shard, clearing one source or all, 409 while a run crawls the source,
# and a refused restart with another shard count.  Entries are written with
# the test-only `sluice-test delta-seed` (the import workers come later).
SLUICE=${SLUICE_TEST:?set SLUICE_TEST to the sluice-test binary}
. "$(dirname "$0")/lib.sh"
JM=$(cd "$(dirname "$0")/jm" && pwd)

write_config "$TMP/config.json" ".jobmanager = {\"configDir\": \"$JM\", \"workflowsDir\": \"$JM/workflows\"} | .workers = {\"threads\": 0}"
"$SLUICE" delta-seed "$TMP/data" src1 50
"$SLUICE" delta-seed "$TMP/data" src2 10
"$SLUICE" delta-seed "$TMP/data" files1 5
start_server --config "$TMP/config.json" --data-dir "$TMP/data"

req GET /smila/importing/
expect_jq '.links[0].name == "delta"' "importing links"
req GET /smila/importing/delta/
expect_status 200 "list sources"
expect_jq '[.sources[] | [.source, .entryCount]] == [["files1",5],["src1",50],["src2",10]]' "sources with entry counts"
req GET /smila/importing/delta/src1/
expect_jq '.entryCount == 50 and (.shards | length) == 16 and ([.shards[].entryCount] | add) == 50' "one source, per-shard counts"
req GET /smila/importing/delta/nosuch/
expect_error 404 NOT_FOUND "unknown source"
req DELETE /smila/importing/delta/src2/
expect_status 200 "clear one source"
req GET /smila/importing/delta/src2
expect_status 404 "cleared source is gone"
req GET /smila/importing/delta/src1
expect_jq '.entryCount == 50' "other sources untouched"

req POST /smila/jobmanager/jobs/crawlJob/
RUN=$(jq -r .jobId "$BODY")
req DELETE /smila/importing/delta/files1/
expect_error 409 CONFLICT "clearing a source with an active run"
req DELETE /smila/importing/delta/
expect_error 409 CONFLICT "clearing all while a source is crawled"
req DELETE /smila/importing/delta/src1/
expect_status 200 "another source may be cleared meanwhile"
req POST "/smila/jobmanager/jobs/crawlJob/$RUN/cancel"
for i in $(seq 1 50); do
    req GET "/smila/jobmanager/jobs/crawlJob/$RUN/"
    [ "$(jq -r .state "$BODY")" = CANCELED ] && break
    sleep 0.1
done
req DELETE /smila/importing/delta/
expect_status 200 "clear all after the run"
req GET /smila/importing/delta/
expect_jq '.sources == []' "no sources left"
req POST /smila/importing/delta/
expect_status 405 "wrong method"
stop_server

write_config "$TMP/eight.json" ".deltaShards = 8 | .jobmanager = {\"configDir\": \"$JM\", \"workflowsDir\": \"$JM/workflows\"}"
rc=0
timeout 10 "$SLUICE" serve --config "$TMP/eight.json" --data-dir "$TMP/data" 2>"$TMP/err" || rc=$?
[ "$rc" = 1 ] && grep -qi "shard" "$TMP/err" && ok "another deltaShards is refused: $(grep -i shard "$TMP/err" | head -1 | cut -c1-160)" \
    || fail "deltaShards change: exit $rc, $(cat "$TMP/err")"
finish
