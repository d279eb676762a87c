#!/bin/bash
# A changed compound pushes only its new and changed elements (issue 25):
# the updatePusher checks each element of a changed compound against the
# delta service (docs/workers.md "updatePusher").
# 1. full: a folder holding a zip of three members; one member edited and
#    one removed (the zip rebuilt with `zip`, the third member's mtime
#    kept): the re-crawl pushes the zip and the edited member only, the
#    unchanged member stays indexed with its content, the removed one
#    leaves the index;
# 2. additive, nested: a zip holding a zip; a member of the outer one
#    edited and one removed: the nested zip and its member are not pushed
#    again, nothing is deleted.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"

# pusher NAME: the updatePusher's counter NAME in the last run.
pusher() {
    jq --arg n "$1" '[.worker | to_entries[] | select(.key | endswith("_updatePusher"))
        | .value[$n] // 0] | add // 0' "$RUNJSON"
}

# inserted: records the processing job indexUpdate took in so far (its
# bulkbuilder's records.inserted in the current run).
inserted() {
    local cur
    wait_indexed
    cur=$(curl -sS "$BASE/smila/jobmanager/jobs/indexUpdate/" | jq -r .runs.current)
    curl -sS "$BASE/smila/jobmanager/jobs/indexUpdate/$cur/" |
        jq '[.worker | to_entries[] | select(.key | endswith("_bulkbuilder"))
            | .value["records.inserted"] // 0] | add // 0'
}

# doc ID: the stored document of ID in $BODY; 0 if it is indexed.
doc() {
    req GET "/smila/index/default/$(jq -rn --arg id "$1" '$id|@uri')"
    [ "$STATUS" = 200 ]
}

# sha SNAPSHOT ID: the text hash of ID in a snapshot.
sha() {
    awk -F'\t' -v id="$2" '$1 == id {print $2}' "$1"
}

import_config "$TMP/config.json"
start_server --config "$TMP/config.json" --data-dir "$TMP/data"

# ---- 1. full: one member edited, one removed
M="$TMP/m1"
F="$TMP/full"
mkdir -p "$M" "$F"
F=$(realpath "$F")
echo "apricot keeper words" >"$M/keep.txt"
echo "blueberry first words" >"$M/edit.txt"
echo "cherry doomed words" >"$M/gone.txt"
touch -d '2024-03-01 10:00:00' "$M"/*.txt
(cd "$M" && zip -q "$F/pack.zip" keep.txt edit.txt gone.txt)
define_crawl crawlFull "$F" cfull
if crawl crawlFull; then ok "full: first run SUCCEEDED"; else fail "full: first run failed"; fi
[ "$(pusher records.pushed)" = 4 ] && ok "full: the zip and its 3 members are pushed" ||
    fail "full: first run pushed $(pusher records.pushed), want 4"
snapshot "$TMP/s1"
doc "$F/pack.zip!/keep.txt" || fail "full: keep.txt is not indexed after the first run"
before=$(inserted)

echo "blueberry second words, edited" >"$M/edit.txt"
touch -d '2024-03-02 10:00:00' "$M/edit.txt"
rm "$F/pack.zip"
(cd "$M" && zip -q "$F/pack.zip" keep.txt edit.txt)
if crawl crawlFull; then ok "full: second run SUCCEEDED"; else fail "full: second run failed"; fi
[ "$(counter records.changed)" = 1 ] && ok "full: the deltaChecker found the zip changed" ||
    fail "full: records.changed $(counter records.changed), want 1"
[ "$(counter elements.records)" = 2 ] && ok "full: the fileExtractor wrote its 2 members" ||
    fail "full: elements.records $(counter elements.records), want 2"
[ "$(pusher records.pushed)" = 2 ] && ok "full: pushed the zip and one element (the edited one)" ||
    fail "full: pushed $(pusher records.pushed), want 2 (the zip and edit.txt)"
[ "$(pusher elements.uptodate)" = 1 ] && ok "full: one element up to date (elements.uptodate)" ||
    fail "full: elements.uptodate $(pusher elements.uptodate), want 1"
[ "$(pusher records.deleted)" = 1 ] && ok "full: one delete (the removed member)" ||
    fail "full: deleted $(pusher records.deleted), want 1"
wait_indexed
snapshot "$TMP/s2"
printf '%s\n' "$F/pack.zip" "$F/pack.zip!/edit.txt" "$F/pack.zip!/keep.txt" | LC_ALL=C sort >"$TMP/want2"
ids "$TMP/s2" >"$TMP/got2"
diff "$TMP/want2" "$TMP/got2" >"$TMP/diff" && ok "full: the removed member left the index" ||
    fail "full: index ids: $(cat "$TMP/diff")"
[ -n "$(sha "$TMP/s1" "$F/pack.zip!/keep.txt")" ] &&
    [ "$(sha "$TMP/s1" "$F/pack.zip!/keep.txt")" = "$(sha "$TMP/s2" "$F/pack.zip!/keep.txt")" ] &&
    ok "full: the unchanged member keeps its text" || fail "full: keep.txt text changed or missing"
[ $(($(inserted) - before)) = 2 ] && ok "full: indexUpdate took in 2 records (the zip and edit.txt)" ||
    fail "full: indexUpdate took in $(($(inserted) - before)) records, want 2"
"$SLUICE" search --server "$BASE" apricot >"$TMP/hits" 2>/dev/null || true
grep -qF "pack.zip!/keep.txt" "$TMP/hits" && ok "full: the unchanged member is found by its content" ||
    fail "full: search apricot: $(cat "$TMP/hits")"
"$SLUICE" search --server "$BASE" edited >"$TMP/hits" 2>/dev/null || true
grep -qF "pack.zip!/edit.txt" "$TMP/hits" && ok "full: the edited member is found by its new content" ||
    fail "full: search edited: $(cat "$TMP/hits")"
"$SLUICE" search --server "$BASE" --limit 50 'in:pack.zip' >"$TMP/hits" 2>/dev/null || true
[ "$(cut -f2 "$TMP/hits" | LC_ALL=C sort | paste -sd' ')" = "$F/pack.zip!/edit.txt $F/pack.zip!/keep.txt" ] &&
    ok "full: in:pack.zip finds the archive's members, not the archive" ||
    fail "full: in:pack.zip: $(cut -f2 "$TMP/hits" | paste -sd' ')"
req GET /smila/importing/delta/cfull/
expect_jq '.entryCount == 3' "full: 3 delta entries (the zip and its 2 members)"
if crawl crawlFull; then ok "full: third run SUCCEEDED"; else fail "full: third run failed"; fi
[ "$(pusher records.pushed)" = 0 ] && [ "$(pusher records.deleted)" = 0 ] &&
    ok "full: an unchanged re-run pushes and deletes nothing" ||
    fail "full: third run pushed $(pusher records.pushed), deleted $(pusher records.deleted)"

# ---- 2. additive, nested: the nested zip is not pushed again
M="$TMP/m2"
A="$TMP/add"
mkdir -p "$M/in" "$A"
A=$(realpath "$A")
echo "dewberry deep words" >"$M/in/deep.txt"
touch -d '2024-03-01 10:00:00' "$M/in/deep.txt"
(cd "$M/in" && zip -q ../inner.zip deep.txt)
echo "elderberry note" >"$M/note.txt"
echo "fig old words" >"$M/old.txt"
touch -d '2024-03-01 10:00:00' "$M/inner.zip" "$M/note.txt" "$M/old.txt"
(cd "$M" && zip -q "$A/outer.zip" inner.zip note.txt old.txt)
define_crawl crawlAdd "$A" cadd '{"deltaImportStrategy": "additive"}'
if crawl crawlAdd; then ok "additive: first run SUCCEEDED"; else fail "additive: first run failed"; fi
[ "$(pusher records.pushed)" = 5 ] && ok "additive: the zip, its 3 members and the nested member are pushed" ||
    fail "additive: first run pushed $(pusher records.pushed), want 5"
echo "elderberry note, edited" >"$M/note.txt"
touch -d '2024-03-02 10:00:00' "$M/note.txt"
rm "$A/outer.zip"
(cd "$M" && zip -q "$A/outer.zip" inner.zip note.txt)
if crawl crawlAdd; then ok "additive: second run SUCCEEDED"; else fail "additive: second run failed"; fi
[ "$(pusher records.pushed)" = 2 ] && ok "additive: pushed the zip and the edited member" ||
    fail "additive: pushed $(pusher records.pushed), want 2"
[ "$(pusher elements.uptodate)" = 2 ] && ok "additive: the nested zip and its member are up to date" ||
    fail "additive: elements.uptodate $(pusher elements.uptodate), want 2"
[ "$(pusher records.deleted)" = 0 ] && doc "$A/outer.zip!/old.txt" &&
    ok "additive: nothing deleted, the removed member stays" ||
    fail "additive: deleted $(pusher records.deleted), old.txt status $STATUS"
doc "$A/outer.zip!/inner.zip!/deep.txt" && ok "additive: the nested member is still indexed" ||
    fail "additive: deep.txt status $STATUS"

stop_server
finish
