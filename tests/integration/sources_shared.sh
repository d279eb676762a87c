#!/bin/bash
# Documents that several sources reach, beyond sources.sh (docs/index.md
# "Sources: documents several sources reach"): a delete from source S
# removes S from the document's sources (GET of the document: "_sources"),
# the document leaves the index only when no source holds it.
# 1. web crawler: jobs webA and webB (sources webA, webB) crawl the same
#    small site on 127.0.0.1; webB is redefined with /b.html out of its
#    urlPatterns: its full crawl leaves /b.html indexed, held by webA; a
#    page removed from the site (404) is still held by webB after webA's
#    crawl, and gone after webB's;
# 2. a zip made by `zip` (a.txt, b.txt) crawled by file jobs of sources zA
#    and zB: B is redefined to exclude the zip (filePatterns.exclude): its
#    full crawl leaves the zip and both elements held by zA; b.txt removed
#    from the zip, A's re-crawl deletes that element's document;
# 3. additive: job A (additive, source adA) and job B (full, adB) on one
#    folder; B excludes a file and re-crawls: the document stays for adA;
#    the file deleted on disk, A's additive re-crawl deletes nothing;
# 4. kill -9 during a shared delta-delete (SLUICE_TEST_DELAY
#    updatePusher.deltaDelete): B (kB) excludes shared.txt, its own
#    only.txt is removed from disk; the server is killed while B's run is
#    COMPLETING and restarted without the delay: the run SUCCEEDS,
#    shared.txt stays held by kA, only.txt is gone.
# KEEP=DIR: the server logs (every start) are copied to DIR on exit.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"
. "$(dirname "$0")/web_lib.sh"

# The server's log is emptied at each start: keep_log collects it first.
keep_log() {
    { echo "==== $1"; cat "$TMP/server.log"; } >>"$TMP/server-all.log" 2>/dev/null || true
}
on_exit() {
    local rc=$?
    if [ -n "${KEEP:-}" ]; then
        keep_log exit
        mkdir -p "$KEEP" && cp "$TMP/server-all.log" "$KEEP/sources_shared.server.log" || true
    fi
    # shellcheck disable=SC2086 # SITE_PIDS is a list of pids
    kill $SITE_PIDS 2>/dev/null
    (exit $rc)
    cleanup
}
trap on_exit EXIT

# doc ID: GET the document ID into $BODY.
doc() {
    req GET "/smila/index/default/$(jq -rn --arg id "$1" '$id|@uri')"
}
# sources ID: its sources, comma-separated ("" when it is not indexed).
sources() {
    doc "$1"
    if [ "$STATUS" = 200 ]; then jq -r '._sources | join(",")' "$BODY"; else echo ""; fi
}
# expect_sources ID WANT DESCRIPTION
expect_sources() {
    local got
    got=$(sources "$1")
    [ "$got" = "$2" ] && ok "$3" || fail "$3: $1 has sources '$got', want '$2'"
}
# expect_gone ID DESCRIPTION: ID is not indexed.
expect_gone() {
    doc "$1"
    expect_status 404 "$2"
}
# expect_jq_run FILTER DESCRIPTION: the filter is true for the last run's data.
expect_jq_run() {
    jq -e "$1" "$RUNJSON" >/dev/null && ok "$2" || fail "$2: $(jq -c "{completion, state}" "$RUNJSON")"
}
# crawl_ok JOB DESCRIPTION: crawl JOB, one ok/fail line.
crawl_ok() {
    if crawl "$1"; then ok "$2"; else fail "$2: run $(jq -r .state "$RUNJSON" 2>/dev/null): $(cat "$TMP/crawl.err")"; fi
}

# ---- the site of case 1: / links a.html, b.html and gone.html; a path
# listed in the file $TMP/removed answers 404.
REMOVED="$TMP/removed"
: >"$REMOVED"
py_site "$REMOVED" <<'PY'
PAGES = {
    "/": '<html><head><title>home</title></head><body>start '
         '<a href="/a.html">a</a> <a href="/b.html">b</a> <a href="/gone.html">g</a></body></html>',
    "/a.html": "<html><head><title>a</title></head><body>alpha aardvark</body></html>",
    "/b.html": "<html><head><title>b</title></head><body>bravo badger</body></html>",
    "/gone.html": "<html><head><title>g</title></head><body>golf gopher</body></html>",
}
class H(Base):
    def do_GET(self):
        removed = open(sys.argv[2]).read().split()
        if self.path in removed or self.path not in PAGES:
            return self.not_found()
        self.send("text/html; charset=utf-8", PAGES[self.path].encode())
PY

import_config "$TMP/config.json"
start_server --config "$TMP/config.json" --data-dir "$TMP/data"

# ---- 1. web crawler: two sources on one site
define_web webA "$SITE" webA
define_web webB "$SITE" webB
crawl_ok webA "1: crawl webA SUCCEEDED"
crawl_ok webB "1: crawl webB SUCCEEDED"
for p in / /a.html /b.html /gone.html; do
    expect_sources "$SITE$p" "webA,webB" "1: $p is held by webA and webB"
done
define_web webB "$SITE" webB '.filters.urlPatterns.exclude = ["^" + $site + "/b\\.html$"]'
crawl_ok webB "1: crawl webB with /b.html out of its scope SUCCEEDED"
expect_counter records.deleted = 1 "1: webB's delta-delete sent one delete (/b.html)"
expect_sources "$SITE/b.html" "webA" "1: /b.html stays in the index, held by webA"
expect_sources "$SITE/a.html" "webA,webB" "1: /a.html is still held by both"
echo /gone.html >"$REMOVED"
crawl_ok webA "1: crawl webA after /gone.html was removed from the site SUCCEEDED"
expect_sources "$SITE/gone.html" "webB" "1: after webA's crawl /gone.html is held by webB only"
crawl_ok webB "1: crawl webB after /gone.html was removed SUCCEEDED"
expect_gone "$SITE/gone.html" "1: after both crawls /gone.html left the index"
expect_sources "$SITE/b.html" "webA" "1: /b.html is still held by webA"

# ---- 2. a zip and its elements
M="$TMP/zm"
Z="$TMP/zip"
mkdir -p "$M" "$Z"
Z=$(realpath "$Z")
echo "amber zipped words" >"$M/a.txt"
echo "basil zipped words" >"$M/b.txt"
echo "cedar plain words" >"$Z/plain.txt"
touch -d '2024-03-01 10:00:00' "$M"/*.txt
(cd "$M" && zip -q "$Z/pack.zip" a.txt b.txt)
define_crawl zipA "$Z" zA
define_crawl zipB "$Z" zB
crawl_ok zipA "2: crawl zA SUCCEEDED"
crawl_ok zipB "2: crawl zB SUCCEEDED"
for id in "$Z/pack.zip" "$Z/pack.zip!/a.txt" "$Z/pack.zip!/b.txt"; do
    expect_sources "$id" "zA,zB" "2: ${id#"$Z/"} is held by zA and zB"
done
define_crawl zipB "$Z" zB '{"filters": {"filePatterns": {"exclude": ["^pack\\.zip$"]}}}'
crawl_ok zipB "2: crawl zB with the zip excluded SUCCEEDED"
expect_counter records.deleted = 3 "2: zB's delta-delete sent 3 deletes (the zip and its elements)"
for id in "$Z/pack.zip" "$Z/pack.zip!/a.txt" "$Z/pack.zip!/b.txt"; do
    expect_sources "$id" "zA" "2: ${id#"$Z/"} stays, held by zA only"
done
expect_sources "$Z/plain.txt" "zA,zB" "2: plain.txt is still held by both"
rm "$Z/pack.zip"
(cd "$M" && zip -q "$Z/pack.zip" a.txt)
crawl_ok zipA "2: crawl zA after b.txt was removed from the zip SUCCEEDED"
expect_gone "$Z/pack.zip!/b.txt" "2: the removed member's document left the index"
expect_sources "$Z/pack.zip!/a.txt" "zA" "2: a.txt stays, held by zA"
expect_sources "$Z/pack.zip" "zA" "2: the zip stays, held by zA"

# ---- 3. additive and full on one folder
D="$TMP/add"
mkdir -p "$D"
D=$(realpath "$D")
echo "delta kept words" >"$D/keep.txt"
echo "echo dropped words" >"$D/drop.txt"
define_crawl addA "$D" adA '{"deltaImportStrategy": "additive"}'
define_crawl fullB "$D" adB
crawl_ok addA "3: additive crawl adA SUCCEEDED"
crawl_ok fullB "3: full crawl adB SUCCEEDED"
expect_sources "$D/drop.txt" "adA,adB" "3: drop.txt is held by adA and adB"
define_crawl fullB "$D" adB '{"filters": {"filePatterns": {"exclude": ["^drop\\.txt$"]}}}'
crawl_ok fullB "3: crawl adB with drop.txt excluded SUCCEEDED"
expect_counter records.deleted = 1 "3: adB's delta-delete sent one delete"
expect_sources "$D/drop.txt" "adA" "3: drop.txt stays, held by adA (additive)"
rm "$D/drop.txt"
crawl_ok addA "3: additive crawl adA after drop.txt was deleted on disk SUCCEEDED"
expect_counter records.deleted = 0 "3: the additive crawl sent no delete"
expect_counter entries.removed = 0 "3: and removed no delta entry"
expect_sources "$D/drop.txt" "adA" "3: drop.txt is still indexed, held by adA (additive never deletes)"
expect_sources "$D/keep.txt" "adA,adB" "3: keep.txt is held by both"

# ---- 4. kill -9 during a shared delta-delete
K="$TMP/kill"
mkdir -p "$K"
K=$(realpath "$K")
echo "foxtrot shared words" >"$K/shared.txt"
echo "gamma own words" >"$K/only.txt"
echo "hotel both words" >"$K/both.txt"
define_crawl killA "$K" kA '{"filters": {"filePatterns": {"exclude": ["^only\\.txt$"]}}}'
define_crawl killB "$K" kB
crawl_ok killA "4: crawl kA SUCCEEDED"
crawl_ok killB "4: crawl kB SUCCEEDED"
expect_sources "$K/shared.txt" "kA,kB" "4: shared.txt is held by kA and kB"
expect_sources "$K/only.txt" "kB" "4: only.txt is held by kB only"
define_crawl killB "$K" kB '{"filters": {"filePatterns": {"exclude": ["^shared\\.txt$"]}}}'
rm "$K/only.txt"
keep_log "before the restart with the delay"
SLUICE_TEST_DELAY=updatePusher.deltaDelete=3000 kill9_restart "$TMP/data"
start_run killB
state=$(until_state killB "$RUN" COMPLETING)
[ "$state" = COMPLETING ] && ok "4: kB's run is COMPLETING (its delta-delete waits)" ||
    fail "4: kB's run is $state, not COMPLETING"
# the delta-delete's tasks wait 3 s before they send anything
[ "$(sources "$K/shared.txt")" = "kA,kB" ] && [ "$(sources "$K/only.txt")" = kB ] &&
    echo "# killed before any delete of kB was sent" ||
    echo "# some deletes of kB were sent before the kill"
keep_log "killed in $state"
kill9_restart "$TMP/data"
if wait_run killB "$RUN"; then ok "4: after kill -9 and a restart kB's run SUCCEEDED"; else
    fail "4: run state after the restart $(jq -r .state "$RUNJSON")"; fi
expect_jq_run '.completion.ran == true' "4: the resumed run ran its completion phase"
expect_counter records.deleted = 2 "4: kB's delta-delete sent 2 deletes (shared.txt, only.txt)"
expect_sources "$K/shared.txt" "kA" "4: shared.txt stays, held by kA"
expect_gone "$K/only.txt" "4: only.txt (kB's alone) left the index"
expect_sources "$K/both.txt" "kA,kB" "4: both.txt is still held by both"
req GET /smila/importing/delta/kB/
expect_jq '.entryCount == 1' "4: kB keeps one delta entry (both.txt)"

stop_server
finish
