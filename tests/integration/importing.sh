#!/bin/bash
# The importing REST API of the delta service: sources with entry counts
# per shard, clearing one source or all (which invalidates the entries:
# they stay, counted in invalidatedCount), 409 while a run crawls the source,
# and a refused restart with another shard count.  Entries are written with
# the test-only `sluice-test delta-seed` (the import workers come later).
# The same for the visited links (/smila/importing/visitedlinks/), seeded
# with mdb_load in the layout docs/deltaservice.md documents (key
# source NUL url in the "visited" database of shard crc32(url) % 16, value
# the run sequence as 8 bytes little-endian), so the per-shard counts also
# check that layout.
SLUICE=${SLUICE_TEST:?set SLUICE_TEST to the sluice-test binary}
. "$(dirname "$0")/lib.sh"
JM=$(cd "$(dirname "$0")/jm" && pwd)

write_config "$TMP/config.json" ".jobmanager = {\"configDir\": \"$JM\", \"workflowsDir\": \"$JM/workflows\"} | .workers = {\"threads\": 0}"
"$SLUICE" delta-seed "$TMP/data" src1 50
"$SLUICE" delta-seed "$TMP/data" src2 10
"$SLUICE" delta-seed "$TMP/data" files1 5

# crc32 of a string (zlib's, as the shard function): the gzip trailer.
crc32() { printf '%s' "$1" | gzip -c | tail -c8 | od -An -tu4 -N4 | tr -d ' '; }
declare -A VSHARD # "source shard" -> expected visited links
# seed_visited SOURCE URL...: run sequence 1.
seed_visited() {
    local src=$1 url shard
    shift
    for url in "$@"; do
        shard=$(($(crc32 "$url") % 16))
        VSHARD["$src $shard"]=$((${VSHARD["$src $shard"]:-0} + 1))
        printf '%s\\00%s\n\\01\\00\\00\\00\\00\\00\\00\\00\n' "$src" "$url" |
            mdb_load -T -s visited "$(printf '%s/data/delta/shard-%02d' "$TMP" "$shard")"
    done
}
# shard_counts SOURCE: the expected per-shard counts as a JSON array.
shard_counts() {
    local s out=""
    for s in $(seq 0 15); do out="$out${out:+,}${VSHARD["$1 $s"]:-0}"; done
    echo "[$out]"
}
seed_visited vsrc1 $(for i in $(seq 1 20); do echo "http://h$((i % 3)).example/p/$i"; done)
seed_visited vsrc2 http://a.example/ http://b.example/ http://c.example/x http://c.example/y
seed_visited files1 http://f.example/1 http://f.example/2 http://f.example/3
seed_visited src1 http://s.example/

start_server --config "$TMP/config.json" --data-dir "$TMP/data"

req GET /smila/importing/
expect_jq '[.links[].name] == ["delta", "visitedlinks"] and (.links[1].url | endswith("/smila/importing/visitedlinks/"))' "importing links"
req GET /smila/importing/delta/
expect_status 200 "list sources"
expect_jq '[.sources[] | [.source, .entryCount]] == [["files1",5],["src1",50],["src2",10]]' "sources with entry counts"
req GET /smila/importing/delta/src1/
expect_jq '.entryCount == 50 and (.shards | length) == 16 and ([.shards[].entryCount] | add) == 50' "one source, per-shard counts"
req GET /smila/importing/delta/nosuch/
expect_error 404 NOT_FOUND "unknown source"
req GET /smila/importing/delta/src2/
expect_jq '.entryCount == 10 and .invalidatedCount == 0' "seeded entries are valid"
req DELETE /smila/importing/delta/src2/
expect_status 200 "clear one source"
req GET /smila/importing/delta/src2
expect_jq '.entryCount == 10 and .invalidatedCount == 10' "cleared source keeps its entries, all invalidated"
req GET /smila/importing/delta/src1
expect_jq '.entryCount == 50 and .invalidatedCount == 0' "other sources untouched"

req GET /smila/importing/visitedlinks/
expect_status 200 "list visited-link sources"
expect_jq '[.sources[] | [.source, .entryCount]] == [["files1",3],["src1",1],["vsrc1",20],["vsrc2",4]]' "visited-link sources with counts"
expect_jq '.sources[2].url | endswith("/smila/importing/visitedlinks/vsrc1/")' "visited-link source url"
req GET /smila/importing/visitedlinks/vsrc1/
expect_status 200 "one visited-link source"
expect_jq ".source == \"vsrc1\" and .entryCount == 20 and [.shards[].entryCount] == $(shard_counts vsrc1) and [.shards[].shard] == [range(16)]" "visited links per shard (crc32 % 16 of the url)"
req GET /smila/importing/visitedlinks/vsrc2
expect_jq ".entryCount == 4 and [.shards[].entryCount] == $(shard_counts vsrc2)" "second visited-link source, no trailing slash"
req GET /smila/importing/visitedlinks/nosuch/
expect_error 404 NOT_FOUND "unknown visited-link source"
req GET /smila/importing/delta/vsrc1/
expect_error 404 NOT_FOUND "a visited-link source is no delta source"
req GET /smila/importing/visitedlinks/src2/
expect_error 404 NOT_FOUND "a delta source is no visited-link source"
req GET "/smila/importing/visitedlinks/$(printf 'x%.0s' $(seq 1 300))/"
expect_error 400 INVALID_INPUT "too long visited-link source"
req GET /smila/importing/visitedlinks/vsrc1/more/
expect_error 404 NOT_FOUND "path below a visited-link source"
req DELETE /smila/importing/visitedlinks/vsrc1/more
expect_error 404 NOT_FOUND "DELETE below a visited-link source"
req PUT /smila/importing/visitedlinks/vsrc1/
expect_error 405 METHOD_NOT_ALLOWED "PUT of a visited-link source"
req POST /smila/importing/visitedlinks/
expect_error 405 METHOD_NOT_ALLOWED "POST of the visited links"
req DELETE /smila/importing/visitedlinks/vsrc2/
expect_status 200 "clear the visited links of one source"
expect_jq '.source == "vsrc2" and .cleared == true' "clear one source: body"
req GET /smila/importing/visitedlinks/vsrc2/
expect_error 404 NOT_FOUND "cleared visited-link source is gone"
req GET /smila/importing/visitedlinks/vsrc1/
expect_jq '.entryCount == 20' "other visited-link sources untouched"
req GET /smila/importing/delta/src1/
expect_jq '.entryCount == 50' "delta entries untouched by clearing visited links"
req DELETE /smila/importing/delta/src1/
req GET /smila/importing/visitedlinks/src1/
expect_jq '.entryCount == 1' "visited links untouched by clearing delta entries"

req POST /smila/jobmanager/jobs/crawlJob/
RUN=$(jq -r .jobId "$BODY")
req DELETE /smila/importing/delta/files1/
expect_error 409 CONFLICT "clearing a source with an active run"
req DELETE /smila/importing/delta/
expect_error 409 CONFLICT "clearing all while a source is crawled"
req DELETE /smila/importing/delta/src1/
expect_status 200 "another source may be cleared meanwhile"
req DELETE /smila/importing/visitedlinks/files1/
expect_error 409 CONFLICT "clearing the visited links of a source with an active run"
req DELETE /smila/importing/visitedlinks/
expect_error 409 CONFLICT "clearing all visited links while a source is crawled"
req DELETE /smila/importing/visitedlinks/vsrc1/
expect_status 200 "visited links of another source may be cleared meanwhile"
req GET /smila/importing/visitedlinks/files1/
expect_jq '.entryCount == 3' "refused clears kept the visited links"
req POST "/smila/jobmanager/jobs/crawlJob/$RUN/cancel"
for i in $(seq 1 50); do
    req GET "/smila/jobmanager/jobs/crawlJob/$RUN/"
    [ "$(jq -r .state "$BODY")" = CANCELED ] && break
    sleep 0.1
done
req DELETE /smila/importing/delta/
expect_status 200 "clear all after the run"
req GET /smila/importing/delta/
expect_jq '[.sources[] | [.source, .entryCount]] == [["files1",5],["src1",50],["src2",10]]' "clear all keeps the entries"
for s in files1 src1 src2; do
    req GET "/smila/importing/delta/$s/"
    expect_jq '.invalidatedCount == .entryCount' "clear all invalidated every entry of $s"
done
req GET /smila/importing/visitedlinks/
expect_jq '[.sources[].source] == ["files1", "src1"]' "clearing all delta entries keeps the visited links"
req DELETE /smila/importing/visitedlinks/
expect_status 200 "clear all visited links after the run"
expect_jq '.cleared == true' "clear all visited links: body"
req GET /smila/importing/visitedlinks/
expect_jq '.sources == []' "no visited-link sources left"
req POST /smila/importing/delta/
expect_status 405 "wrong method"
stop_server

write_config "$TMP/eight.json" ".deltaShards = 8 | .jobmanager = {\"configDir\": \"$JM\", \"workflowsDir\": \"$JM/workflows\"}"
rc=0
timeout 10 "$SLUICE" serve --config "$TMP/eight.json" --data-dir "$TMP/data" 2>"$TMP/err" || rc=$?
[ "$rc" = 1 ] && grep -qi "shard" "$TMP/err" && ok "another deltaShards is refused: $(grep -i shard "$TMP/err" | head -1 | cut -c1-160)" \
    || fail "deltaShards change: exit $rc, $(cat "$TMP/err")"
finish
