#!/bin/bash
# File import end to end (issue 5): the repository's fileCrawling and
# indexUpdate workflows in the real server, crawl jobs pushed into the
# processing job, documents in the embedded index.
# 1. initial import of a generated tree (nested folders, unicode and
#    non-UTF-8 names, an empty file, a zip inside a tar.gz inside a zip):
#    every regular file and archive element is in the index exactly once;
# 2. a re-run with no change pushes and deletes nothing;
# 3. modify, add, delete files, change an element inside a zip, delete a
#    whole zip: the index equals a fresh import of the new tree;
# 4. the four deltaImportStrategy values;
# 5. a run with a fatal error performs no delta-delete.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"

T="$TMP/tree"
A="$TMP/arch"
mkdir -p "$T/a/b/c" "$T/docs" "$T/ünï cödé" "$A/in" "$A/z"
T=$(realpath "$T")
echo "alpha one" >"$T/a/one.txt"
printf '<html><head><title>Page Two</title><script>var hiddenword=1</script><style>p{}</style></head><body><p>bravo two</p></body></html>\n' >"$T/a/b/two.html"
echo "<doc><t>charlie three</t></doc>" >"$T/a/b/c/three.xml"
: >"$T/empty.txt"
echo "delta four" >"$T/ünï cödé/vier.txt"
echo "echo five" >"$T/bad-"$'\xff'".txt"
echo "foxtrot nested" >"$A/in/c.txt"
(cd "$A/in" && zip -q ../inner.zip c.txt)
(cd "$A" && tar -czf mid.tar.gz inner.zip)
echo "golf outer" >"$A/top.txt"
(cd "$A" && zip -q "$T/docs/outer.zip" mid.tar.gz top.txt)
echo "hotel" >"$A/z/h.txt"
echo "india" >"$A/z/i.txt"
(cd "$A/z" && zip -q "$T/docs/plain.zip" h.txt i.txt)
(cd "$A/z" && zip -q "$T/docs/gone.zip" h.txt)

# expected_ids: every regular file (non-UTF-8 bytes escaped as \xNN) and
# every archive element, byte order.
expected_ids() {
    {
        find "$T" -type f | LC_ALL=C sed 's/\xff/\\xff/g'
        [ -f "$T/docs/outer.zip" ] && printf '%s\n' \
            "$T/docs/outer.zip!/mid.tar.gz" \
            "$T/docs/outer.zip!/mid.tar.gz!/inner.zip" \
            "$T/docs/outer.zip!/mid.tar.gz!/inner.zip!/c.txt" \
            "$T/docs/outer.zip!/top.txt"
        [ -f "$T/docs/plain.zip" ] && printf '%s\n' \
            "$T/docs/plain.zip!/h.txt" "$T/docs/plain.zip!/i.txt"
        [ -f "$T/docs/gone.zip" ] && printf '%s\n' "$T/docs/gone.zip!/h.txt"
        true
    } | LC_ALL=C sort
}

import_config "$TMP/config.json"
start_server --config "$TMP/config.json" --data-dir "$TMP/data1"

# ---- a crawl job cannot start while its jobToPushTo cannot take records
define_crawl crawlMain "$T" main
req POST /smila/jobmanager/jobs/ -H 'Content-Type: application/json' \
    -d '{"name": "toNowhere", "workflow": "fileCrawling", "parameters": {"dataSource": "x", "rootFolder": "/tmp", "jobToPushTo": "crawlMain"}}'
req POST /smila/jobmanager/jobs/toNowhere/ -d '{"mode": "runOnce"}'
expect_error 409 CONFLICT "a crawl pushing to a job that is not a running bulk source does not start"
expect_jq '.error.message | test("crawlMain")' "the 409 names the target job"
req POST /smila/jobmanager/jobs/ -H 'Content-Type: application/json' \
    -d '{"name": "noTarget", "workflow": "fileCrawling", "parameters": {"dataSource": "y", "rootFolder": "/tmp"}}'
req POST /smila/jobmanager/jobs/noTarget/ -d '{"mode": "runOnce"}'
expect_error 400 INVALID_INPUT "a crawl without jobToPushTo or remote does not start"

# ---- 1. initial import
if crawl crawlMain; then ok "initial import SUCCEEDED"; else fail "initial import: $(cat "$TMP/crawl.err")"; fi
expected_ids >"$TMP/want1"
snapshot "$TMP/s1"
ids "$TMP/s1" >"$TMP/got1"
if diff "$TMP/want1" "$TMP/got1" >"$TMP/diff"; then
    ok "every file and archive element is in the index once ($(wc -l <"$TMP/want1") documents)"
else
    fail "index ids differ from the tree: $(head -c 600 "$TMP/diff")"
fi
req GET /smila/index/default/
expect_jq ".documentCount == $(wc -l <"$TMP/want1")" "documentCount matches"
# the text travels textExtractor -> indexWriter as an attachment: the
# indexed text of a UTF-8 file is its content, byte for byte
want_sha=$(sha256sum <"$T/ünï cödé/vier.txt" | cut -d' ' -f1)
grep -qF "$T/ünï cödé/vier.txt	$want_sha" "$TMP/s1" && ok "a text file's indexed text is its content, byte for byte" ||
    fail "text of vier.txt: want sha256 $want_sha, index has $(grep -F "vier.txt" "$TMP/s1")"
[ "$(counter records.pushed)" = "$(wc -l <"$TMP/want1")" ] && ok "pushed every record once" ||
    fail "pushed $(counter records.pushed), want $(wc -l <"$TMP/want1")"
"$SLUICE" search --server "$BASE" foxtrot >"$TMP/hits" 2>/dev/null
grep -qF "outer.zip!/mid.tar.gz!/inner.zip!/c.txt" "$TMP/hits" && ok "a word of the nested zip element is found" ||
    fail "search foxtrot: $(cat "$TMP/hits")"
"$SLUICE" search --server "$BASE" bravo >"$TMP/hits" 2>/dev/null
grep -q "two.html	Page Two" "$TMP/hits" && ok "HTML text is indexed with its title" || fail "search bravo: $(cat "$TMP/hits")"
"$SLUICE" search --server "$BASE" hiddenword >"$TMP/hits" 2>/dev/null
[ ! -s "$TMP/hits" ] && ok "script text is not indexed" || fail "search hiddenword found: $(cat "$TMP/hits")"
req GET "/smila/index/default/$(jq -rn --arg id "$T/bad-\\xff.txt" '$id|@uri')"
expect_status 200 "the non-UTF-8 name is indexed under its escaped id"
req GET /smila/importing/delta/main/
expect_jq ".entryCount == $(wc -l <"$TMP/want1")" "the delta service holds one entry per record"

# ---- 2. no change: nothing pushed, nothing deleted
if crawl crawlMain; then ok "no-change re-run SUCCEEDED"; else fail "no-change re-run failed"; fi
[ "$(counter records.pushed)" = 0 ] && [ "$(counter records.deleted)" = 0 ] &&
    ok "no-change re-run pushed and deleted nothing" ||
    fail "no-change re-run pushed $(counter records.pushed), deleted $(counter records.deleted)"
[ "$(counter files.uptodate)" = "$(find "$T" -type f | wc -l)" ] && ok "the crawler's delta pre-check found every file up to date" ||
    fail "files.uptodate $(counter files.uptodate)"
[ "$(counter files.records)" = 0 ] && [ "$(counter records.uptodate)" = 0 ] &&
    ok "no record was written for the deltaChecker" ||
    fail "files.records $(counter files.records), deltaChecker records.uptodate $(counter records.uptodate)"
snapshot "$TMP/s1b"
cmp -s "$TMP/s1" "$TMP/s1b" && ok "index unchanged" || fail "index changed on a no-change run"

# ---- 3. changes
sleep 0.01
echo "alpha one changed" >"$T/a/one.txt"
echo "juliet new" >"$T/a/b/new.txt"
rm "$T/a/b/c/three.xml"
echo "india changed" >"$A/z/i.txt"
rm "$T/docs/plain.zip"
(cd "$A/z" && zip -q "$T/docs/plain.zip" h.txt i.txt)
rm "$T/docs/gone.zip"
if crawl crawlMain; then ok "changed re-run SUCCEEDED"; else fail "changed re-run failed"; fi
[ "$(counter records.deleted)" = 3 ] && ok "three deletes (a file, a zip and its element)" ||
    fail "deleted $(counter records.deleted), want 3"
[ "$(counter records.changed)" = 2 ] && [ "$(counter records.new)" = 1 ] &&
    ok "two changed records and one new" || fail "changed $(counter records.changed), new $(counter records.new)"
snapshot "$TMP/s2"
expected_ids >"$TMP/want2"
ids "$TMP/s2" >"$TMP/got2"
diff "$TMP/want2" "$TMP/got2" >"$TMP/diff" && ok "index ids equal the changed tree" ||
    fail "index ids after changes: $(head -c 600 "$TMP/diff")"
"$SLUICE" search --server "$BASE" india >"$TMP/hits" 2>/dev/null
grep -qF "plain.zip!/i.txt" "$TMP/hits" && ok "the changed zip element is found" || fail "search india: $(cat "$TMP/hits")"
stop_server

# The same tree imported fresh into another data dir: the same index.
start_server --config "$TMP/config.json" --data-dir "$TMP/data2"
define_crawl crawlMain "$T" main
if crawl crawlMain; then ok "fresh import SUCCEEDED"; else fail "fresh import failed"; fi
snapshot "$TMP/fresh"
if diff "$TMP/fresh" "$TMP/s2" >"$TMP/diff"; then
    ok "incremental index equals a fresh import (ids and text hashes)"
else
    fail "incremental and fresh index differ: $(head -c 600 "$TMP/diff")"
fi

# ---- 4. strategies: pushes on an unchanged re-run, delta entries, deletes
in_index() {
    req GET "/smila/index/default/$(jq -rn --arg id "$1" '$id|@uri')"
    [ "$STATUS" = 200 ]
}
for s in disabled initial additive full; do
    S="$TMP/s-$s"
    mkdir -p "$S"
    S=$(realpath "$S")
    for i in 1 2 3; do echo "strategy $s file $i" >"$S/x$i.txt"; done
    define_crawl "c-$s" "$S" "src-$s" "{\"deltaImportStrategy\": \"$s\"}"
    crawl "c-$s" || fail "$s: first run failed"
    [ "$(counter records.pushed)" = 3 ] && ok "$s: first run pushes 3" || fail "$s: first run pushed $(counter records.pushed)"
    req GET "/smila/importing/delta/src-$s/"
    entries=$(jq '.entryCount // 0' "$BODY")
    case $s in
    disabled) want=0 ;;
    *) want=3 ;;
    esac
    [ "$entries" = "$want" ] && ok "$s: $want delta entries" || fail "$s: $entries delta entries, want $want"
    crawl "c-$s" || fail "$s: second run failed"
    case $s in
    disabled | initial) want=3 ;;
    *) want=0 ;;
    esac
    [ "$(counter records.pushed)" = "$want" ] && ok "$s: unchanged re-run pushes $want" ||
        fail "$s: unchanged re-run pushed $(counter records.pushed), want $want"
    rm "$S/x3.txt"
    crawl "c-$s" || fail "$s: third run failed"
    if [ $s = full ]; then
        [ "$(counter records.deleted)" = 1 ] && ! in_index "$S/x3.txt" &&
            ok "$s: the deleted file leaves the index" || fail "$s: deleted $(counter records.deleted)"
    else
        [ "$(counter records.deleted)" = 0 ] && in_index "$S/x3.txt" &&
            ok "$s: no delta-delete, the file stays" || fail "$s: deleted $(counter records.deleted)"
    fi
done

# ---- 4b. deltaPrecheck false: the deltaChecker checks every record
P="$TMP/noprecheck"
mkdir -p "$P"
P=$(realpath "$P")
for i in 1 2 3; do echo "precheck off file $i" >"$P/p$i.txt"; done
define_crawl c-nopre "$P" src-nopre '{"deltaPrecheck": false}'
crawl c-nopre || fail "deltaPrecheck false: first run failed"
echo "precheck off, changed" >"$P/p1.txt"
crawl c-nopre || fail "deltaPrecheck false: second run failed"
[ "$(counter files.uptodate)" = 0 ] && [ "$(counter files.records)" = 3 ] &&
    [ "$(counter records.uptodate)" = 2 ] && [ "$(counter records.changed)" = 1 ] &&
    [ "$(counter records.pushed)" = 1 ] &&
    ok "deltaPrecheck false: 3 records to the deltaChecker, 2 up to date, 1 changed and pushed" ||
    fail "deltaPrecheck false: files.uptodate $(counter files.uptodate), files.records $(counter files.records), uptodate $(counter records.uptodate), changed $(counter records.changed), pushed $(counter records.pushed)"

# ---- 5. a run with a fatal error performs no delta-delete
F="$TMP/fatal"
mkdir -p "$F"
F=$(realpath "$F")
echo "keep one" >"$F/k1.txt"
echo "keep two" >"$F/k2.txt"
define_crawl c-fatal "$F" src-fatal
crawl c-fatal || fail "fatal: first run failed"
rm "$F/k2.txt"
echo "keep one, changed" >"$F/k1.txt"
# The root is gone: the crawler's task fails fatally.  (A maxFileSize that
# is not a number, used here before, is now refused when the job is
# defined.)
define_crawl c-fatal "$F/gone" src-fatal
if crawl c-fatal; then fail "fatal: the run should fail"; else ok "fatal: the run FAILED"; fi
jq -e '.state == "FAILED"' "$RUNJSON" >/dev/null && ok "fatal: state FAILED" || fail "fatal: state $(jq -r .state "$RUNJSON")"
[ "$(counter records.deleted)" = 0 ] && in_index "$F/k2.txt" &&
    ok "fatal: no delta-delete after a fatal error" || fail "fatal: deleted $(counter records.deleted)"
jq -e '.errors | length > 0' "$RUNJSON" >/dev/null && ok "fatal: the run data names the error" || fail "fatal: no errors in the run data"

# ---- 6. mapping: the crawl job names the attributes, the processing job
# (a second indexUpdate job with the same mapping) reads them.
M="$TMP/mapped"
mkdir -p "$M"
M=$(realpath "$M")
export M
echo "oscar mapped words" >"$M/o.txt"
MAPPING='{"fileName": "Filename", "filePath": "Path", "fileSize": "Size", "fileContent": "Content", "fileExtension": "Ext", "fileLastModified": "Modified", "fileFolder": "Folder"}'
req POST /smila/jobmanager/jobs/ -H 'Content-Type: application/json' \
    -d "{\"name\": \"mappedIndex\", \"workflow\": \"indexUpdate\", \"parameters\": {\"index\": \"mapped\", \"mapping\": $MAPPING}}"
req POST /smila/jobmanager/jobs/mappedIndex/ -d '{}'
expect_status 200 "start a second processing job with a mapping"
define_crawl c-map "$M" src-map "{\"jobToPushTo\": \"mappedIndex\", \"mapping\": $MAPPING}"
crawl c-map || fail "mapping: the run failed"
req GET "/smila/index/mapped/$(jq -rn --arg id "$M/o.txt" '$id|@uri')"
expect_jq '.Filename == "o.txt" and .Path == $ENV.M + "/o.txt" and .Size == 19 and .Ext == "txt" and (.Modified | length > 0) and (has("fileName") | not) and (has("filePath") | not)' \
    "mapped attribute names from the crawler"
expect_jq '.title == "o.txt" and (.text | test("oscar")) and .path == $ENV.M + "/o.txt"' \
    "the processing job finds the mapped content and fields"
stop_server
finish
