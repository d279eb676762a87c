#!/bin/bash
# Web import: robots directives of a page (issue 6: "meta robots
# nofollow/noindex honoured"), as <meta name="robots"> and as the
# X-Robots-Tag response header, on a generated site (web_site.py
# --noindex):
# 1. a crawl (strategy full): pages with meta noindex, meta none or
#    X-Robots-Tag noindex, and a text resource with X-Robots-Tag noindex,
#    are not indexed, while the links of the noindex pages are followed;
#    meta none and X-Robots-Tag nofollow stop the links; X-Robots-Tag for
#    another crawler (googlebot:) is ignored; records.noindex counts them;
# 2. two indexed pages become noindex (one by meta, one by header): a
#    re-crawl takes them out of the index, the pages they link stay;
# 3. the directives go away: the next crawl indexes them again.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"
. "$(dirname "$0")/web_lib.sh"

MUTATE="$TMP/mutate.json"
start_site site --mutate-file "$MUTATE" --pages 12 --noindex

start_web_server

define_job webNoindex webCrawling "$(web_params "$SITE" robotsmeta '.deltaImportStrategy = "full" |
    .politeness.userAgent = "SluiceBot/0.1 (+https://example.invalid)"')"
expect_status 200 "crawl job defined"

# ---- 1. first crawl
expect_crawl webNoindex "crawl SUCCEEDED"
site_expected "$SITE" --pages 12 --noindex >"$TMP/want1"
expect_index "$TMP/want1" "the index holds every page but the noindex ones ($(wc -l <"$TMP/want1"))"
for p in /ni/meta.html /ni/none.html /ni/header.html /ni/doc.txt; do
    [ "$(requests "$p")" -ge 1 ] || fail "$p was not even requested"
done
[ "$(requests /ni/child1.html)" = 1 ] && [ "$(requests /ni/child2.html)" = 1 ] &&
    ok "the links of noindex pages (meta and header) are followed" ||
    fail "child requests: $(requests /ni/child1.html) $(requests /ni/child2.html)"
expect_requests /ni/child-none.html = 0 "meta robots none stops the links"
expect_requests /ni/child3.html = 0 "X-Robots-Tag: nofollow stops the links"
expect_counter records.noindex = 4 "records.noindex = 4 (meta, none, header, a text resource)"
search_hits foxtrot
grep -qF "$SITE/ni/doc.txt" "$TMP/hits" && fail "the noindex resource is searchable" ||
    ok "a resource with X-Robots-Tag: noindex is not indexed"

# ---- 2. indexed pages become noindex
echo '{"noindex": ["/p/7.html"], "xnoindex": ["/p/8.html"]}' >"$MUTATE"
: >"$SITE_LOG"
expect_crawl webNoindex "re-crawl SUCCEEDED"
wait_indexed
grep -v -e "^$SITE/p/7.html\$" -e "^$SITE/p/8.html\$" "$TMP/want1" >"$TMP/want2"
expect_index "$TMP/want2" "pages that became noindex (meta, X-Robots-Tag) left the index, the rest stays"
expect_counter records.noindex = 6 "records.noindex = 6"
expect_counter entries.removed = 2 "the delta-delete removed their entries"

# ---- 3. indexable again
rm -f "$MUTATE"
expect_crawl webNoindex "third crawl SUCCEEDED"
wait_indexed
expect_index "$TMP/want1" "without the directives they are indexed again"
expect_counter records.pushed = 2 "only those two are pushed"

stop_server
finish
