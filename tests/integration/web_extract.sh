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
# 3. a changed zip: its changed and new elements are pushed, its unchanged
#    element is not, the element it lost is deleted; a vanished tar.gz: it and all its elements
#    (nested ones too) are deleted (strategy full).
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"
. "$(dirname "$0")/web_lib.sh"

MUTATE="$TMP/mutate.json"
start_site site --mutate-file "$MUTATE" --archives

start_web_server

define_web webArc "$SITE" webarc '.deltaImportStrategy = "full" | .filters.maxSize = 200000'

# ---- 1. initial crawl
expect_crawl webArc "web crawl with compounds SUCCEEDED"
site_expected "$SITE" --archives >"$TMP/want1"
expect_index "$TMP/want1" "every page, compound and element is in the index once ($(wc -l <"$TMP/want1"))"
[ -z "$(ids "$TMP/snap" | sort | uniq -d)" ] && ok "no id twice" || fail "ids twice: $(ids "$TMP/snap" | sort | uniq -d)"
expect_counter records.compounds = 6 "the crawler marked 6 compounds (by type and by URL extension)"
expect_counter compounds.corrupt = 1 "the corrupt zip is counted"
# site.zip, archive.zip, plain.zip, bundle.tar.gz, the inner.zip in it
# and broken.zip (opened, then found corrupt)
expect_counter compounds.extracted = 6 "6 archives opened (a nested one included)"
expect_counter elements.records = 8 "8 element records"
expect_counter compounds.passed = 1 "the compound without validator is extracted from the crawled content"
expect_counter compounds.fetched = 4 "the 4 others within maxSize are downloaded"
expect_counter links.skipped.tooLarge -ge 1 "the zip over maxSize is cut off"
for a in /arc/site.zip /arc/bundle.tar.gz /arc/broken.zip /archive.zip; do
    [ "$(requests "$a")" = 2 ] || fail "$a requested $(requests "$a") times, want 2 (crawler headers, extractor content)"
done
expect_requests /arc/plain.zip = 1 "compounds are downloaded once by the extractor (plain.zip only by the crawler)"
req GET "/smila/jobmanager/jobs/webArc/$RUN/"
expect_jq '.state == "SUCCEEDED"' "the run SUCCEEDED"
expect_hit xray "$SITE/arc/bundle.tar.gz!/inner.zip!/x.txt" "the text of a zip in a tar.gz is searchable"
eid=$(jq -rn --arg id "$SITE/arc/site.zip!/dir/b.txt" '$id | @uri')
curl -sS -o "$TMP/doc.json" "$BASE/smila/index/default/$eid"
jq -e --arg c "$SITE/arc/site.zip" '._compoundRecordId == $c and ._source == "webarc" and .httpSize == 13 and
    (.httpLastModified | test("^[A-Z][a-z]{2}, [0-9]{2} Nov 2023 [0-9]{2}:[0-9]{2}:00 GMT$"))' \
    "$TMP/doc.json" >/dev/null && ok "elements carry _compoundRecordId, _source, httpSize and httpLastModified as an HTTP date" ||
    fail "element document: $(head -c 600 "$TMP/doc.json")"

# ---- 2. no change
: >"$SITE_LOG"
expect_crawl webArc "re-crawl SUCCEEDED"
wait_indexed
expect_counter records.pushed = 0 "a re-crawl with no change pushes nothing"
expect_counter entries.removed = 0 "and deletes nothing (the elements of unchanged compounds stay)"
[ "$(requests /arc/site.zip)" = 1 ] && [ "$(requests /arc/bundle.tar.gz)" = 1 ] &&
    ok "unchanged compounds are not downloaded again (headers only)" ||
    fail "site.zip $(requests /arc/site.zip), bundle.tar.gz $(requests /arc/bundle.tar.gz) requests"
expect_index "$TMP/want1" "the index is unchanged"

# ---- 3. a changed zip, a vanished tar.gz
echo '{"change": ["/arc/site.zip"], "remove": ["/arc/bundle.tar.gz"]}' >"$MUTATE"
expect_crawl webArc "crawl after changes SUCCEEDED"
wait_indexed
site_expected "$SITE" --archives --changed >"$TMP/want3"
expect_index "$TMP/want3" "the lost element and the vanished compound with its elements are deleted, the new element added"
# the compound and two of its three elements (a changed, c new; same.txt
# is up to date: same size and mtime)
expect_counter records.pushed = 3 "the changed compound and its changed and new elements are pushed"
expect_counter elements.uptodate = 1 "its unchanged element is not pushed again"
expect_counter entries.removed = 5 "5 delta entries removed (dir/b.txt, the tar.gz and its 3 elements)"
expect_hit changed "$SITE/arc/site.zip!/a.txt" "the changed element is updated"
rm -f "$MUTATE"

stop_server
finish
