#!/bin/bash
# Deleting an index (issue 25, docs/index.md "Deleting an index"):
# DELETE /smila/index/<name>/ against the real server with the
# repository's config/ (the processing job indexUpdate, autoStart, writes
# index "default").
# - 409 naming the job while an active run writes the index: indexUpdate
#   for "default" (the indexWriter's default, set by the job's "index"),
#   and a job that sets "indexWriter.index" for its own index;
# - 404 for an index that does not exist, 400 for a bad name;
# - 200 for an index no running job writes: gone from GET /smila/index/,
#   its files gone from the data dir, a second DELETE 404;
# - a write after the delete creates the index again, empty.
SLUICE=${SLUICE_TEST:?set SLUICE_TEST to the sluice-test binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"

IDX="$TMP/data/index"

# index_files NAME: the files of index NAME in the data dir, one a line.
index_files() {
    find "$IDX" -maxdepth 1 \( -name "$1.db*" -o -name "$1~*" \) -printf '%f\n' | sort
}

# until_count NAME N: until index NAME has N documents (30 s).
until_count() {
    local i
    for i in $(seq 1 300); do
        req GET "/smila/index/$1/"
        [ "$STATUS" = 200 ] && [ "$(jq .documentCount "$BODY")" = "$2" ] && return 0
        sleep 0.1
    done
    return 1
}

# run_state JOB RUN: the run's state.
run_state() {
    curl -sS "$BASE/smila/jobmanager/jobs/$1/$2/" | jq -r .state
}

for n in 1 2 3 4 5 6; do
    echo "{\"_recordid\": \"doc-$n\", \"text\": \"seeded words $n\"}"
done >"$TMP/docs.jsonl"
"$SLUICE" index-seed "$TMP/data" other "$TMP/docs.jsonl"
"$SLUICE" index-seed "$TMP/data" side "$TMP/docs.jsonl"
"$SLUICE" index-seed "$TMP/data" other.x "$TMP/docs.jsonl"

import_config "$TMP/config.json"
start_server --config "$TMP/config.json" --data-dir "$TMP/data"

# index "default" gets documents through indexUpdate
F="$TMP/folder"
mkdir -p "$F"
echo "apple words" >"$F/a.txt"
echo "banana words" >"$F/b.txt"
define_crawl crawlDel "$(realpath "$F")" del
if crawl crawlDel && wait_indexed; then ok "crawl SUCCEEDED"; else fail "crawl failed"; fi
req GET /smila/index/
expect_jq '[.indexes[].name] == ["default", "other", "other.x", "side"]' "four indexes"

# ---- 409 while a run writes the index
req DELETE /smila/index/default/
expect_error 409 CONFLICT "delete the index indexUpdate writes"
expect_jq '.error.field == "index" and (.error.message | contains("indexUpdate"))' "409 names the job"
req GET /smila/index/default/
expect_jq '.documentCount == 2' "the refused delete kept the index"
[ -n "$(index_files default)" ] && ok "the refused delete kept the files" || fail "default's files are gone"

# ---- 404, 400
req DELETE /smila/index/nosuch/
expect_error 404 NOT_FOUND "delete an unknown index"
req DELETE '/smila/index/bad%20name/'
expect_error 400 INVALID_NAME "delete an index with a bad name"

# ---- 200 for an index no run writes
[ -n "$(index_files other)" ] && ok "other has files before" || fail "other has no files"
req DELETE /smila/index/other/
expect_status 200 "delete an index no run writes"
expect_jq '. == {"name": "other", "deleted": true}' "delete answer"
req GET /smila/index/
expect_jq '[.indexes[].name] == ["default", "other.x", "side"]' "other is gone from the list"
req GET /smila/index/other/
expect_error 404 NOT_FOUND "other is gone"
[ -z "$(index_files other)" ] && ok "other's files are gone (shards, WAL, SHM)" ||
    fail "left on disk: $(index_files other | tr '\n' ' ')"
[ -n "$(index_files other.x)" ] && ok "other.x keeps its files" || fail "other.x's files are gone"
req GET /smila/index/other.x/
expect_jq '.documentCount == 6' "other.x keeps its documents"
req DELETE /smila/index/other/
expect_error 404 NOT_FOUND "a second delete"

# ---- a job writing its own index through indexWriter.index
req POST /smila/jobmanager/jobs/ -H 'Content-Type: application/json' \
    -d '{"name": "sideUpdate", "workflow": "indexUpdate", "parameters": {"indexWriter.index": "side"}}'
expect_status 200 "define sideUpdate"
req POST /smila/jobmanager/jobs/sideUpdate/
expect_status 200 "start sideUpdate"
RUN=$(jq -r .jobId "$BODY")
req DELETE /smila/index/side/
expect_error 409 CONFLICT "delete the index sideUpdate writes"
expect_jq '.error.message | contains("sideUpdate")' "409 names sideUpdate"
req POST "/smila/jobmanager/jobs/sideUpdate/$RUN/finish/"
expect_status 200 "finish sideUpdate"
for i in $(seq 1 300); do
    [ "$(run_state sideUpdate "$RUN")" = SUCCEEDED ] && break
    sleep 0.1
done
req DELETE /smila/index/side/
expect_status 200 "delete side after its run"
[ -z "$(index_files side)" ] && ok "side's files are gone" || fail "left: $(index_files side | tr '\n' ' ')"

# ---- a later write creates it again, empty
req POST /smila/jobmanager/jobs/sideUpdate/
RUN=$(jq -r .jobId "$BODY")
req POST /smila/job/sideUpdate/record -d '{"_recordid": "fresh", "text": "fresh words"}'
expect_status 202 "a record for side"
until_count side 1 && ok "side is created again with the new document only" ||
    fail "side: $(cat "$BODY")"
req GET /smila/index/side/search -G --data-urlencode 'q=seeded'
expect_jq '.total == 0' "no seeded document came back"
req POST "/smila/jobmanager/jobs/sideUpdate/$RUN/finish/"

stop_server
finish
