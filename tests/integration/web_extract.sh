#!/bin/bash
# webExtractor end to end (issue 6): the repository's webCrawling workflow
# against the generated site with --archives (tests/integration/
# web_site.py): compounds found on the web are marked by the webCrawler
# (MIME type, or the URL extension for application/octet-stream), routed
# by the deltaChecker to the webExtractor, downloaded (or taken from the
# record when the crawler kept them) and extracted by the fileExtractor's
# code.
# 1. every element (also of a zip inside a tar.gz) is indexed exactly once
#    with id <url>!/<inner path>, next to its compound; a corrupt zip is
#    counted and indexed as itself; a zip over filters.maxSize is cut off
#    and not indexed; each compound was downloaded once by the extractor;
#    the run SUCCEEDED;
# 2. a re-crawl with no change pushes nothing, deletes nothing and
#    downloads no compound;
# 3. a changed zip: its changed and new elements are pushed, the element
#    it lost is deleted; a vanished tar.gz: it and all its elements
#    (nested ones too) are deleted (strategy full).
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"

SITE_LOG="$TMP/access.log"
MUTATE="$TMP/mutate.json"
python3 "$SRC/tests/integration/web_site.py" --port-file "$TMP/site.port" \
    --log "$SITE_LOG" --mutate-file "$MUTATE" --archives &
SITE_PID=$!
trap 'kill $SITE_PID 2>/dev/null; cleanup' EXIT
for _ in $(seq 1 100); do [ -s "$TMP/site.port" ] && break; sleep 0.05; done
SITE="http://127.0.0.1:$(cat "$TMP/site.port")"

import_config "$TMP/config.json"
start_server --config "$TMP/config.json" --data-dir "$TMP/data"

params=$(jq -cn --arg url "$SITE/" --arg inc "^$SITE/" \
    '{dataSource: "webarc", startUrl: $url, jobToPushTo: "indexUpdate",
      deltaImportStrategy: "full",
      filters: {urlPatterns: {include: [$inc]}, maxSize: 200000},
      politeness: {delayMs: 0, maxConnectionsPerHost: 4}}')
req POST /smila/jobmanager/jobs/ -H 'Content-Type: application/json' \
    -d "{\"name\": \"webArc\", \"workflow\": \"webCrawling\", \"parameters\": $params}"
[ "$STATUS" = 200 ] || { echo "define webArc: $STATUS $(cat "$BODY")" >&2; exit 1; }

expected() {
    python3 "$SRC/tests/integration/web_site.py" --expected --archives "$@" |
        sed "s|^|$SITE|" | LC_ALL=C sort
}
requests() {
    grep -c " $1\$" "$SITE_LOG" || true
}

# ---- 1. initial crawl
if crawl webArc; then ok "web crawl with compounds SUCCEEDED"; else fail "crawl: $(cat "$TMP/crawl.err")"; fi
snapshot "$TMP/s1"
ids "$TMP/s1" | LC_ALL=C sort >"$TMP/got1"
expected >"$TMP/want1"
if diff "$TMP/want1" "$TMP/got1" >"$TMP/diff"; then
    ok "every page, compound and element is in the index once ($(wc -l <"$TMP/want1"))"
else
    fail "index ids differ from the site: $(head -c 1200 "$TMP/diff")"
fi
[ -z "$(ids "$TMP/s1" | sort | uniq -d)" ] && ok "no id twice" || fail "ids twice: $(ids "$TMP/s1" | sort | uniq -d)"
[ "$(counter records.compounds)" = 6 ] && ok "the crawler marked 6 compounds (by type and by URL extension)" ||
    fail "records.compounds = $(counter records.compounds)"
[ "$(counter compounds.corrupt)" = 1 ] && ok "the corrupt zip is counted" ||
    fail "compounds.corrupt = $(counter compounds.corrupt)"
# site.zip, archive.zip, plain.zip, bundle.tar.gz, the inner.zip in it
# and broken.zip (opened, then found corrupt)
[ "$(counter compounds.extracted)" = 6 ] && ok "6 archives opened (a nested one included)" ||
    fail "compounds.extracted = $(counter compounds.extracted)"
[ "$(counter elements.records)" = 8 ] && ok "8 element records" ||
    fail "elements.records = $(counter elements.records)"
[ "$(counter compounds.passed)" = 1 ] && ok "the compound without validator is extracted from the crawled content" ||
    fail "compounds.passed = $(counter compounds.passed)"
[ "$(counter compounds.fetched)" = 4 ] && ok "the 4 others within maxSize are downloaded" ||
    fail "compounds.fetched = $(counter compounds.fetched)"
[ "$(counter links.skipped.tooLarge)" -ge 1 ] && ok "the zip over maxSize is cut off" ||
    fail "links.skipped.tooLarge = $(counter links.skipped.tooLarge)"
for a in /arc/site.zip /arc/bundle.tar.gz /arc/broken.zip /archive.zip; do
    [ "$(requests "$a")" = 2 ] || fail "$a requested $(requests "$a") times, want 2 (crawler headers, extractor content)"
done
[ "$(requests /arc/plain.zip)" = 1 ] && ok "compounds are downloaded once by the extractor (plain.zip only by the crawler)" ||
    fail "/arc/plain.zip requested $(requests /arc/plain.zip) times"
req GET "/smila/jobmanager/jobs/webArc/$RUN/"
expect_jq '.state == "SUCCEEDED"' "the run SUCCEEDED"
"$SLUICE" search --server "$BASE" xray >"$TMP/hits" 2>/dev/null
grep -qF "$SITE/arc/bundle.tar.gz!/inner.zip!/x.txt" "$TMP/hits" && ok "the text of a zip in a tar.gz is searchable" ||
    fail "search xray: $(cat "$TMP/hits")"
eid=$(jq -rn --arg id "$SITE/arc/site.zip!/dir/b.txt" '$id | @uri')
curl -sS -o "$TMP/doc.json" "$BASE/smila/index/default/$eid"
jq -e --arg c "$SITE/arc/site.zip" '._compoundRecordId == $c and ._source == "webarc" and .httpSize == 13' \
    "$TMP/doc.json" >/dev/null && ok "elements carry _compoundRecordId, _source and httpSize" ||
    fail "element document: $(head -c 600 "$TMP/doc.json")"

# ---- 2. no change
: >"$SITE_LOG"
if crawl webArc; then ok "re-crawl SUCCEEDED"; else fail "re-crawl: $(cat "$TMP/crawl.err")"; fi
wait_indexed
[ "$(counter records.pushed)" = 0 ] && ok "a re-crawl with no change pushes nothing" ||
    fail "pushed $(counter records.pushed) on a no-change re-crawl"
[ "$(counter entries.removed)" = 0 ] && ok "and deletes nothing (the elements of unchanged compounds stay)" ||
    fail "removed $(counter entries.removed)"
[ "$(requests /arc/site.zip)" = 1 ] && [ "$(requests /arc/bundle.tar.gz)" = 1 ] &&
    ok "unchanged compounds are not downloaded again (headers only)" ||
    fail "site.zip $(requests /arc/site.zip), bundle.tar.gz $(requests /arc/bundle.tar.gz) requests"
snapshot "$TMP/s2"
ids "$TMP/s2" | LC_ALL=C sort | diff -q "$TMP/want1" - >/dev/null && ok "the index is unchanged" ||
    fail "the index changed on a no-change re-crawl"

# ---- 3. a changed zip, a vanished tar.gz
echo '{"change": ["/arc/site.zip"], "remove": ["/arc/bundle.tar.gz"]}' >"$MUTATE"
if crawl webArc; then ok "crawl after changes SUCCEEDED"; else fail "crawl 3: $(cat "$TMP/crawl.err")"; fi
wait_indexed
snapshot "$TMP/s3"
ids "$TMP/s3" | LC_ALL=C sort >"$TMP/got3"
expected --changed >"$TMP/want3"
if diff "$TMP/want3" "$TMP/got3" >"$TMP/diff"; then
    ok "the lost element and the vanished compound with its elements are deleted, the new element added"
else
    fail "index after changes: $(head -c 1200 "$TMP/diff")"
fi
# the compound and its three elements (a changed, same, c new)
[ "$(counter records.pushed)" = 4 ] && ok "the changed compound and its elements are pushed" ||
    fail "pushed $(counter records.pushed), want 4"
[ "$(counter entries.removed)" = 5 ] && ok "5 delta entries removed (dir/b.txt, the tar.gz and its 3 elements)" ||
    fail "entries.removed = $(counter entries.removed)"
"$SLUICE" search --server "$BASE" changed >"$TMP/hits" 2>/dev/null
grep -qF "$SITE/arc/site.zip!/a.txt" "$TMP/hits" && ok "the changed element is updated" ||
    fail "search changed: $(cat "$TMP/hits")"
rm -f "$MUTATE"

stop_server
finish
