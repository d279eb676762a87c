#!/bin/bash
# The embedded index REST API and `sluice search`: documents are seeded with
# the test-only `sluice-test index-seed` before the server starts (the
# indexWriter worker comes later); then every route, its errors (404, 400,
# 405), URL-encoded record ids and the CLI output are checked.
SLUICE=${SLUICE_TEST:?set SLUICE_TEST to the sluice-test binary}
. "$(dirname "$0")/lib.sh"

cat >"$TMP/docs.jsonl" <<'JSONL'
{"_recordid": "/data/a.txt", "title": "Quarterly report", "path": "/data/a.txt", "mimeType": "text/plain", "size": 90, "text": "The quarterly report shows growth and a new warehouse in the north."}
{"_recordid": "/data/b.txt", "title": "Lunch menu", "path": "/data/b.txt", "text": "Soup and bread; a short report about nothing."}
{"_recordid": "/data/dir with space/ü.txt", "title": "Grüße", "path": "/data/dir with space/ü.txt", "text": "Viele Grüße aus Köln"}
{"_recordid": "plain", "title": "No path", "text": "zebra"}
JSONL
echo '{"_recordid": "x", "text": "other index"}' >"$TMP/other.jsonl"
"$SLUICE" index-seed "$TMP/data" docs "$TMP/docs.jsonl"
"$SLUICE" index-seed "$TMP/data" other "$TMP/other.jsonl"
# Seeding again is idempotent.
"$SLUICE" index-seed "$TMP/data" docs "$TMP/docs.jsonl"

write_config "$TMP/config.json" '.workers = {"threads": 0}'
start_server --config "$TMP/config.json" --data-dir "$TMP/data"

req GET /smila/index/
expect_status 200 "list indexes"
expect_jq '[.indexes[] | [.name, .documentCount]] == [["docs",4],["other",1]]' "indexes with counts"
expect_jq '.indexes[0].url | endswith("/smila/index/docs/")' "index url"
req GET /smila/index/docs/
expect_jq '{name, documentCount} == {"name":"docs","documentCount":4}' "one index"
expect_jq '(.segments | type) == "number" and .segments >= 1 and (.merging | type) == "boolean"' "segments and merging"
# opened shards are due for a merge after index.idleMergeMs (2 s): it ends
for _ in $(seq 1 100); do
    req GET /smila/index/docs/
    [ "$(jq -r .merging "$BODY")" = false ] && break
    sleep 0.1
done
expect_jq '.merging == false and .segments >= 1' "the idle merge ends"
req GET /smila/index/docs
expect_status 200 "trailing slash optional"
req GET /smila/index/nosuch/
expect_error 404 NOT_FOUND "unknown index"
req GET '/smila/index/bad%20name/'
expect_error 400 INVALID_NAME "invalid index name"
req PUT /smila/index/docs/
expect_status 405 "PUT an index is not allowed"
if grep -i '^Allow:' "$HEADERS" | grep -q GET && grep -i '^Allow:' "$HEADERS" | grep -q DELETE; then
    ok "405 has Allow (GET, DELETE)"
else
    fail "405 Allow: $(grep -i '^Allow:' "$HEADERS")"
fi
req POST /smila/index/docs/search
expect_status 405 "POST search"

req GET '/smila/index/docs/search?q=warehouse'
expect_status 200 "search"
expect_jq '.total == 1 and .hits[0]._recordid == "/data/a.txt" and .hits[0].title == "Quarterly report" and .hits[0].path == "/data/a.txt" and (.hits[0].snippet | contains("<b>warehouse</b>")) and .hits[0].score > 0' "search hit with snippet"
req GET '/smila/index/docs/search?q=report'
expect_jq '.total == 2 and [.hits[]._recordid] == ["/data/a.txt","/data/b.txt"]' "ranking: title match first"
req GET '/smila/index/docs/search?q=report&limit=1&offset=1'
expect_jq '.total == 2 and [.hits[]._recordid] == ["/data/b.txt"]' "limit and offset"
req GET /smila/index/docs/search -G --data-urlencode 'q=title:lunch OR köln'
expect_jq '.total == 2' "column filter, OR, unicode (URL-encoded)"
req GET /smila/index/docs/search -G --data-urlencode 'q="new warehouse"'
expect_jq '.total == 1' "phrase query"
req GET /smila/index/docs/search -G --data-urlencode 'q=quarter*'
expect_jq '.total == 1' "prefix query"
req GET '/smila/index/docs/search?q=nothingmatches'
expect_jq '.total == 0 and .hits == []' "no hits"
req GET /smila/index/docs/search
expect_error 400 INVALID_INPUT "missing q"
req GET '/smila/index/docs/search?q='
expect_error 400 INVALID_INPUT "empty q"
req GET /smila/index/docs/search -G --data-urlencode 'q="unterminated'
expect_status 200 "an unbalanced quote is read, not refused"
req GET /smila/index/docs/search -G --data-urlencode 'q=report nosuchcol:x'
expect_error 400 INVALID_INPUT "unknown field in query"
expect_jq '.error.field == "q" and (.error.message | contains("nosuchcol") and contains("position 8"))' "the error names the field and its position"
req GET /smila/index/docs/search -G --data-urlencode 'q=report.'
expect_jq '.total >= 1' "a word with punctuation as typed (report.)"
req GET /smila/index/docs/search -G --data-urlencode 'q=report type:text size:<100'
expect_jq '.total == 1 and .hits[0]._recordid == "/data/a.txt"' "words with field filters (type:, size:)"
req GET /smila/index/docs/search -G --data-urlencode 'q=path:/data -lunch'
expect_jq '.total == 2 and ([.hits[]._recordid] | index("/data/b.txt") == null) and all(.hits[]; .score == 0 and .snippet == null)' "filters and a negated word alone: no rank, no snippet"
req GET /smila/index/docs/search -G --data-urlencode 'q=report' --data-urlencode 'facets=ext,type' --data-urlencode 'sort=size' --data-urlencode 'order=asc'
expect_jq '.total == 2 and .facets.ext == [{"value":"txt","count":2}] and .facets.type == [{"value":"text/plain","count":1}] and .hits[0]._recordid == "/data/b.txt"' "facets and sort=size&order=asc"
req GET '/smila/index/docs/search?q=report&sort=size&order=asc&limit=1'
expect_jq '.hits[0]._recordid == "/data/b.txt" and (.next | test("^[0-9a-f]+$"))' "a page with more after it has a cursor"
cursor=$(jq -r .next "$TMP/body")
req GET "/smila/index/docs/search?q=report&sort=size&order=asc&limit=5&cursor=$cursor"
expect_jq '[.hits[]._recordid] == ["/data/a.txt"] and .total == 2 and has("next") == false' "the cursor's page, the last: no next"
req GET "/smila/index/docs/search?q=lunch&sort=size&order=asc&cursor=$cursor"
expect_error 400 INVALID_INPUT "a cursor of another query"
expect_jq '.error.field == "cursor"' "the error names cursor"
req GET '/smila/index/docs/search?q=report&cursor=zz'
expect_error 400 INVALID_INPUT "a cursor that is none"
req GET '/smila/index/docs/search?q=report&sort=colour'
expect_error 400 INVALID_INPUT "an unknown sort"
expect_jq '.error.field == "sort"' "the error names sort"
req GET '/smila/index/docs/search?q=report&facets=type,colour'
expect_error 400 INVALID_INPUT "an unknown facet"
expect_jq '.error.field == "facets" and (.error.message | contains("colour"))' "the error names the facet"
req GET '/smila/index/docs/search?q=report&limit=abc'
expect_error 400 INVALID_INPUT "bad limit"
req GET '/smila/index/docs/search?q=report&limit=1001'
expect_error 400 INVALID_INPUT "limit too large"
req GET '/smila/index/docs/search?q=report&limit=0'
expect_error 400 INVALID_INPUT "limit zero"
req GET '/smila/index/docs/search?q=report&offset=-1'
expect_error 400 INVALID_INPUT "bad offset"
req GET "/smila/index/docs/search?q=$(printf 'a%.0s' $(seq 1 1100))"
expect_error 400 INVALID_INPUT "query too long"
req GET '/smila/index/nosuch/search?q=x'
expect_error 404 NOT_FOUND "search unknown index"

req GET /smila/index/docs/records
expect_status 200 "records"
expect_jq '[.records[]._recordid] == ["/data/a.txt","/data/b.txt","/data/dir with space/ü.txt","plain"] and .next == null' "records in byte order"
expect_jq '[.records[].textSha256 | length] == [64,64,64,64]' "text hashes"
want=$(printf '%s' 'zebra' | sha256sum | cut -d' ' -f1)
expect_jq ".records[3].textSha256 == \"$want\"" "textSha256 is SHA-256 of the text"
req GET '/smila/index/docs/records?limit=2'
expect_jq '[.records[]._recordid] == ["/data/a.txt","/data/b.txt"] and .next == "/data/b.txt"' "first page and next"
req GET /smila/index/docs/records -G --data-urlencode 'after=/data/b.txt' --data-urlencode 'limit=2'
expect_jq '[.records[]._recordid] == ["/data/dir with space/ü.txt","plain"] and .next == null' "second page"
req GET '/smila/index/docs/records?limit=x'
expect_error 400 INVALID_INPUT "records: bad limit"
req GET '/smila/index/nosuch/records'
expect_error 404 NOT_FOUND "records: unknown index"

req GET '/smila/index/docs/%2Fdata%2Fa.txt'
expect_status 200 "get document by encoded id"
expect_jq '._recordid == "/data/a.txt" and .mimeType == "text/plain" and .size == 90 and (.text | contains("warehouse"))' "stored document"
req GET '/smila/index/docs/%2Fdata%2Fdir%20with%20space%2F%C3%BC.txt'
expect_jq '.title == "Grüße"' "get document with space and unicode in id"
req GET '/smila/index/docs/plain'
expect_jq '.text == "zebra"' "get plain id"
req GET '/smila/index/docs/%2Fdata%2Fnone.txt'
expect_error 404 NOT_FOUND "unknown document"
req GET '/smila/index/nosuch/plain'
expect_error 404 NOT_FOUND "document of unknown index"

# sluice search against the running server.
out=$("$SLUICE" search --server "$BASE" --index docs report 2>"$TMP/search.err")
if [ "$(printf '%s\n' "$out" | cut -f2,3)" = "$(printf '/data/a.txt\tQuarterly report\n/data/b.txt\tLunch menu')" ]; then
    ok "sluice search prints id and title per hit"
else
    fail "sluice search output: $out"
fi
if printf '%s\n' "$out" | head -1 | grep -qE '^[0-9]+\.[0-9]{4}	'; then ok "sluice search prints scores"; else fail "no score: $out"; fi
if grep -q '2 of 2 hit' "$TMP/search.err"; then ok "sluice search summary"; else fail "summary: $(cat "$TMP/search.err")"; fi
out=$("$SLUICE" search --server "$BASE/" --index docs --limit 1 'title:lunch OR köln' 2>/dev/null)
if [ "$(printf '%s\n' "$out" | wc -l)" = 1 ]; then ok "sluice search --limit"; else fail "--limit: $out"; fi
out=$("$SLUICE" search --server "$BASE" --index docs --sort size --asc --facets ext report 2>"$TMP/search.err")
if [ "$(printf '%s\n' "$out" | cut -f2 | paste -sd,)" = "/data/b.txt,/data/a.txt" ] &&
    grep -qx 'ext: txt 2' "$TMP/search.err"; then
    ok "sluice search --sort size --asc --facets ext"
else
    fail "--sort/--facets: $out / $(cat "$TMP/search.err")"
fi
"$SLUICE" search --server "$BASE" --index docs --limit 1 report >/dev/null 2>"$TMP/search.err"
cursor=$(sed -n 's/^next: //p' "$TMP/search.err")
out=$("$SLUICE" search --server "$BASE" --index docs --after "$cursor" report 2>"$TMP/search.err")
if [ -n "$cursor" ] && [ "$(printf '%s\n' "$out" | cut -f2)" = "/data/b.txt" ] && ! grep -q '^next:' "$TMP/search.err"; then
    ok "sluice search prints next: and --after pages"
else
    fail "--after: cursor '$cursor' out $out / $(cat "$TMP/search.err")"
fi
rc=0
"$SLUICE" search --server "$BASE" --index docs 'bad:x' 2>"$TMP/search.err" || rc=$?
if [ "$rc" = 1 ] && grep -q 'HTTP 400' "$TMP/search.err"; then ok "sluice search: an unknown field fails"; else fail "malformed: rc $rc $(cat "$TMP/search.err")"; fi
rc=0
"$SLUICE" search --server "$BASE" --index nosuch x 2>/dev/null || rc=$?
if [ "$rc" = 1 ]; then ok "sluice search: unknown index fails"; else fail "unknown index rc $rc"; fi
rc=0
"$SLUICE" search 2>/dev/null || rc=$?
if [ "$rc" = 2 ]; then ok "sluice search without query: usage error"; else fail "usage rc $rc"; fi
if "$SLUICE" search --help | grep -q 'usage: sluice search'; then ok "sluice search --help"; else fail "--help"; fi

stop_server
# The data survives a restart.
start_server --config "$TMP/config.json" --data-dir "$TMP/data"
req GET /smila/index/docs/
expect_jq '.documentCount == 4' "documents survive a restart"
stop_server
finish
