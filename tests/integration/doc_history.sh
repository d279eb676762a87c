#!/bin/bash
# Per-document history of job runs (docs/jobmanager.md, "Document
# history"), against the real server, file crawler and web crawler:
# - a first crawl records each new file, and the files a filter left out
#   (filePatterns, maxFileSize with the sizes, a symbolic link not
#   followed) as skipped with the rule that did it; unchanged files are
#   counted, not listed;
# - a second crawl records the changed file as changed and the removed one
#   as deleted; the run data counts documents by state;
# - pages, the state filter and bad arguments of
#   GET /smila/jobmanager/jobs/<job>[/<run>]/documents/;
# - GET /smila/importing/documents/<source>/<id> (or ?id=): delta hash,
#   the indexes that hold it, its last problem (failure or skip); a deleted
#   document is 404;
# - the processing job records a document whose converter failed
#   (indexed without text) as failed, "converter.failed";
# - a web crawl records a page answering 404 as failed ("client",
#   "HTTP 404") and the pages it indexed as new;
# - `sluice job report` in text and JSON lines;
# - the history survives kill -9 and a restart; a purge forgets the
#   documents' last problems;
# - a crawl of archives records what the archive limits left out under
#   the entry's id (maxEntrySize, maxNestingDepth, a link in a tar) and a
#   truncated zip as failed; an entry indexed without its content keeps
#   that problem after its push in the same run, a later push clears it.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"
. "$(dirname "$0")/web_lib.sh"

ROOT="$TMP/tree"
mkdir -p "$ROOT/sub"
echo "alpha document" >"$ROOT/a.txt"
echo "bravo document" >"$ROOT/sub/b.txt"
echo "hidden" >"$ROOT/.hidden"
head -c 5000 /dev/zero | tr '\0' x >"$ROOT/big.txt"
ln -s a.txt "$ROOT/link.txt"
printf '#!/bin/sh\necho a shell script\n' >"$ROOT/runme" # its converter fails

py_site <<'EOF'
class H(Pages):
    PAGES = {"/": ("text/html", '<a href="/p1">one</a> <a href="/gone">gone</a>'),
             "/p1": ("text/html", "<p>page one</p>"),
             "/robots.txt": ("text/plain", "")}
EOF
# shell scripts go to a converter that always fails
start_web_server '.textExtractor.converters = {"text/x-shellscript": {"command": ["false"]}}'

define_crawl files "$ROOT" fs '{"filters": {"maxFileSize": 1000, "filePatterns": {"exclude": ["^\\."]}}}'
expect_crawl files "the first file crawl SUCCEEDED"
RUN1=$RUN
jq -e '.documents.new == 3 and .documents.skipped == 3 and .documents.failed == 0' "$RUNJSON" >/dev/null &&
    ok "the run data counts 3 new and 3 skipped documents" || fail "documents: $(jq -c .documents "$RUNJSON")"

req GET "/smila/jobmanager/jobs/files/$RUN1/documents/"
expect_status 200 "the history of the first run"
expect_jq '[.documents[] | select(.state == "new") | .id] | sort == ["'"$ROOT"'/a.txt", "'"$ROOT"'/runme", "'"$ROOT"'/sub/b.txt"]' \
    "the three files are listed as new"
expect_jq '[.documents[] | select(.state == "new")][0] | .worker == "updatePusher" and .source == "fs" and
    (.time | test("^20[0-9][0-9]-"))' "a new document names the worker, the source and the time"
expect_jq 'any(.documents[]; .state == "skipped" and (.id | endswith("/.hidden")) and .reason == "filters.filePatterns")' \
    "the hidden file is skipped by filters.filePatterns"
expect_jq 'any(.documents[]; .state == "skipped" and (.id | endswith("/big.txt")) and .reason == "filters.maxFileSize" and
    (.message | test("5000 bytes, more than 1000")))' "the big file is skipped by filters.maxFileSize, with its size"
expect_jq 'any(.documents[]; .state == "skipped" and (.id | endswith("/link.txt")) and .reason == "filters.followSymbolicLinks")' \
    "the link is skipped by filters.followSymbolicLinks"
expect_jq '.counts.recorded == 6 and .counts.notRecorded == 0 and (has("next") | not)' "6 entries recorded, one page"
req GET "/smila/jobmanager/jobs/indexUpdate/documents/?state=failed"
expect_jq '(.documents | length) == 1 and .documents[0].id == "'"$ROOT"'/runme" and .documents[0].source == "fs" and
    .documents[0].reason == "converter.failed" and .documents[0].worker == "textExtractor"' \
    "the processing job's history: the script whose converter failed (indexed without text)"

req GET "/smila/jobmanager/jobs/files/$RUN1/documents/?state=skipped&limit=2"
expect_jq '(.documents | length) == 2 and all(.documents[]; .state == "skipped") and (.next | type == "number")' \
    "state=skipped&limit=2: two skipped entries and a next"
next=$(jq .next "$BODY")
req GET "/smila/jobmanager/jobs/files/$RUN1/documents/?state=skipped&limit=2&after=$next"
expect_jq '(.documents | length) == 1 and (.documents[0].seq >= '"$next"')' "the next page holds the third skipped entry"
req GET "/smila/jobmanager/jobs/files/$RUN1/documents/?state=gone"
expect_error 400 INVALID_INPUT "an unknown state is refused"
expect_jq '.error.field == "state"' "the error names the argument state"
req GET "/smila/jobmanager/jobs/files/$RUN1/documents/?limit=0"
expect_error 400 INVALID_INPUT "limit=0 is refused"
req GET "/smila/jobmanager/jobs/nojob/documents/"
expect_error 404 NOT_FOUND "a job without runs has no history"
req GET "/smila/jobmanager/jobs/files/20200101-000000000-deadbeef/documents/"
expect_error 404 NOT_FOUND "an unknown run has no history"

echo "alpha document, changed" >"$ROOT/a.txt"
rm "$ROOT/sub/b.txt"
expect_crawl files "the second file crawl SUCCEEDED"
RUN2=$RUN
jq -e '.documents.changed == 1 and .documents.deleted == 1 and .documents.new == 0' "$RUNJSON" >/dev/null &&
    ok "the second run counts 1 changed and 1 deleted document" || fail "documents: $(jq -c .documents "$RUNJSON")"
req GET "/smila/jobmanager/jobs/files/documents/"
expect_jq '.runId == "'"$RUN2"'" and any(.documents[]; .state == "changed" and .id == "'"$ROOT"'/a.txt") and
    any(.documents[]; .state == "deleted" and .id == "'"$ROOT"'/sub/b.txt" and .worker == "updatePusher")' \
    "the newest run by default: a.txt changed, sub/b.txt deleted"

req GET "/smila/importing/documents/fs/$ROOT/a.txt"
expect_status 200 "one document"
expect_jq '.delta.hash != null and .delta.lastSeenRun == .delta.sourceCurrentRun and .indexes == ["default"] and
    .lastProblem == null' "its delta entry, the index that holds it, no problem"
req GET "/smila/importing/documents/fs/$ROOT/runme"
expect_jq '.indexes == ["default"] and .lastProblem.reason == "converter.failed" and .lastProblem.job == "indexUpdate"' \
    "the script: indexed, and its last problem is the converter's"
req GET "/smila/importing/documents/fs/$ROOT/sub/b.txt"
expect_error 404 NOT_FOUND "a deleted document is known to no service"
req GET "/smila/importing/documents/fs/$ROOT/big.txt"
expect_jq '.delta == null and .indexes == [] and .lastProblem.state == "skipped" and
    .lastProblem.reason == "filters.maxFileSize" and .lastProblem.job == "files" and .lastProblem.runId == "'"$RUN2"'"' \
    "a skipped file: its last problem, from the newest run"
req GET "/smila/importing/documents/../$ROOT/a.txt"
expect_error 400 INVALID_INPUT "a bad source name is refused"

# archives: what their limits leave out is reported under the entry's id
ARC="$TMP/arcs"
mkdir -p "$ARC/in"
python3 - "$ARC" <<'EOF'
import io, sys, tarfile, zipfile
d = sys.argv[1]
with zipfile.ZipFile(d + "/big.zip", "w") as z:
    z.writestr("small.txt", "small entry")
    z.writestr("huge.txt", "x" * 6000)
inner = io.BytesIO()
with zipfile.ZipFile(inner, "w") as z:
    z.writestr("deep.txt", "deep entry")
with zipfile.ZipFile(d + "/nest.zip", "w") as z:
    z.writestr("in.zip", inner.getvalue())
with tarfile.open(d + "/links.tar", "w") as t:
    i = tarfile.TarInfo("docs/link")
    i.type, i.linkname = tarfile.SYMTYPE, "../etc/passwd"
    t.addfile(i)
    i = tarfile.TarInfo("docs/plain.txt")
    data = b"plain entry"
    i.size = len(data)
    t.addfile(i, io.BytesIO(data))
whole = io.BytesIO()
with zipfile.ZipFile(whole, "w") as z:  # stored: cut in second.txt
    z.writestr("first.txt", "first entry " * 50)
    z.writestr("second.txt", "second entry " * 60)
open(d + "/cut.zip", "wb").write(whole.getvalue()[:900])
EOF
define_crawl arcs "$ARC" arc '{"maxEntrySize": 1000, "maxNestingDepth": 0}'
expect_crawl arcs "the crawl of archives SUCCEEDED"
RUNA=$RUN
req GET "/smila/jobmanager/jobs/arcs/$RUNA/documents/?state=skipped"
expect_jq 'any(.documents[]; .id == "'"$ARC"'/big.zip!/huge.txt" and .reason == "maxEntrySize" and
    .worker == "fileExtractor" and .source == "arc" and (.message | test("without its content")))'     "an archive entry over maxEntrySize is skipped (indexed without content) under its element id"
expect_jq 'any(.documents[]; .id == "'"$ARC"'/nest.zip!/in.zip" and .reason == "maxNestingDepth")'     "a nested archive past maxNestingDepth is reported, kept as a file"
expect_jq 'any(.documents[]; .id == "'"$ARC"'/links.tar!/docs/link" and .reason == "notRegularFile")'     "a symbolic link in a tar is skipped as notRegularFile"
req GET "/smila/jobmanager/jobs/arcs/$RUNA/documents/?state=failed"
expect_jq '(.documents | length) == 1 and .documents[0].id == "'"$ARC"'/cut.zip" and .documents[0].reason == "corrupt"'     "the truncated zip is failed: corrupt"
req GET "/smila/importing/documents/arc" -G --data-urlencode "id=$ARC/big.zip!/huge.txt"
expect_jq '.indexes == ["default"] and .lastProblem.reason == "maxEntrySize" and .lastProblem.runId == "'"$RUNA"'"'     "the entry is indexed and keeps the problem its run reported before pushing it"
req GET "/smila/importing/documents/arc" -G --data-urlencode "id=$ARC/big.zip!/small.txt"
expect_jq '.indexes == ["default"] and .lastProblem == null' "its sibling has no problem"
python3 -c 'import zipfile,sys; z=zipfile.ZipFile(sys.argv[1],"w"); z.writestr("huge.txt","now small"); z.close()' "$ARC/big.zip"
expect_crawl arcs "the second crawl of archives SUCCEEDED"
req GET "/smila/importing/documents/arc" -G --data-urlencode "id=$ARC/big.zip!/huge.txt"
expect_jq '.indexes == ["default"] and .lastProblem == null' \
    "pushed again in a later run, within the limit: the problem is cleared"

define_web site "$SITE" web
expect_crawl site "the web crawl SUCCEEDED"
req GET "/smila/jobmanager/jobs/site/documents/?state=failed"
expect_jq '(.documents | length) == 1 and .documents[0].id == "'"$SITE"'/gone" and .documents[0].reason == "client" and
    .documents[0].message == "HTTP 404" and .documents[0].worker == "webCrawler"' \
    "the page answering 404 is failed: client, HTTP 404, by the webCrawler"
req GET "/smila/jobmanager/jobs/site/documents/?state=new"
expect_jq '[.documents[].id] | sort == ["'"$SITE"'/", "'"$SITE"'/p1"]' "the two pages crawled are new"
req GET "/smila/importing/documents/web" -G --data-urlencode "id=$SITE/"
expect_jq '.id == "'"$SITE"'/" and .indexes == ["default"] and .delta != null' \
    "a page whose id ends in / is found with ?id="
req GET "/smila/importing/documents/web" -G --data-urlencode "id=$SITE/gone"
expect_jq '.lastProblem.state == "failed" and .lastProblem.message == "HTTP 404" and .indexes == []' \
    "the failed page: its last problem"

out=$("$SLUICE" job report site --failed --server "$BASE" 2>&1)
{ echo "$out" | grep -q "^job site run .*: SUCCEEDED" &&
    echo "$out" | grep -q "1 failed" &&
    echo "$out" | grep -qE "^failed +$SITE/gone  webCrawler  client: HTTP 404$"; } &&
    ok "sluice job report --failed prints the counts and the failed page" || fail "report: $out"
"$SLUICE" job report files "$RUN1" --json --server "$BASE" >"$TMP/report.jsonl" 2>&1
{ [ "$(head -1 "$TMP/report.jsonl" | jq -r .runId)" = "$RUN1" ] &&
    [ "$(tail -n +2 "$TMP/report.jsonl" | jq -s 'length')" = 6 ]; } &&
    ok "sluice job report RUN --json: the run, then one line per document" || fail "report: $(head -c 400 "$TMP/report.jsonl")"
rc=0
"$SLUICE" job report files --state bogus --server "$BASE" >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] && ok "a bad --state is a usage error (2)" || fail "bad --state exited $rc, not 2"

kill -9 "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null || true
start_server --config "$TMP/config.json" --data-dir "$TMP/data"
req GET "/smila/jobmanager/jobs/files/$RUN1/documents/"
expect_jq '.counts.recorded == 6 and .counts.new == 3 and (.documents | length) == 6' \
    "after kill -9 and a restart the history is all there"

req DELETE "/smila/importing/delta/fs/?purge=true"
expect_status 200 "purge the source fs"
req GET "/smila/importing/documents/fs/$ROOT/big.txt"
expect_error 404 NOT_FOUND "the purge forgot the documents' last problems"

stop_server
finish
