#!/bin/bash
# webCrawler followSitemaps (issue 6): the site of web_site.py --sitemaps
# lists three sitemaps in robots.txt (one relative, one gzip-compressed,
# one a sitemap index naming another of them again).
# 1. followSitemaps true: the pages only the sitemaps name are indexed at
#    depth 1; each sitemap is requested once; a sitemap URL disallowed by
#    robots.txt, one excluded by urlPatterns and one on another host are
#    never requested; a page the sitemap shares with the links is fetched
#    once; the run SUCCEEDED;
# 2. a second run fetches each sitemap once again (once per host and run);
# 3. followSitemaps unset (default false): no sitemap and no orphan page is
#    requested.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"
. "$(dirname "$0")/web_lib.sh"

start_site site --pages 10 --sitemaps

start_web_server

define() { # NAME SOURCE [jq filter]: /skip/ excluded
    define_web "$1" "$SITE" "$2" ".filters.urlPatterns.exclude = [\"^$SITE/skip/\"] | ${3:-.}"
}

# ---- 1. followSitemaps
define webSm sm '.followSitemaps = true'
expect_crawl webSm "crawl with followSitemaps SUCCEEDED"
site_expected "$SITE" --pages 10 --sitemaps >"$TMP/want1"
expect_index "$TMP/want1" "the pages only the sitemaps name are indexed with the rest ($(wc -l <"$TMP/want1"))"
for p in /sitemap_index.xml /sitemap-a.xml /sitemap-b.xml.gz /p/0.html /orphan/1.html; do
    [ "$(requests "$p")" = 1 ] || fail "$p requested $(requests "$p") times, want 1"
done
ok "each sitemap (also one listed twice) and each page was requested once"
expect_requests /private/hidden.html = 0 "a sitemap URL robots.txt disallows is not requested"
expect_requests /skip/x.html = 0 "a sitemap URL urlPatterns excludes is not requested"
[ "$(counter sitemaps.fetched)" = 3 ] && ok "3 sitemaps fetched (an index, a plain and a gzip one)" ||
    fail "sitemaps.fetched = $(counter sitemaps.fetched), failed $(counter sitemaps.failed)"
expect_counter links.fromSitemaps = 5 "5 sitemap URLs became links (another host's and the excluded one did not)"
oid=$(jq -rn --arg id "$SITE/orphan/3.html" '$id | @uri')
curl -sS -o "$TMP/doc.json" "$BASE/smila/index/default/$oid"
jq -e '.httpDepth == 1' "$TMP/doc.json" >/dev/null && ok "sitemap URLs have depth 1" ||
    fail "orphan/3.html: $(head -c 400 "$TMP/doc.json")"
search_hits oscar
[ "$(grep -c "$SITE/orphan/" "$TMP/hits")" = 3 ] && ok "the orphan pages are searchable" ||
    fail "search oscar: $(cat "$TMP/hits")"

# ---- 2. once per host and run
: >"$SITE_LOG"
expect_crawl webSm "second run SUCCEEDED"
[ "$(requests /sitemap-a.xml)" = 1 ] && [ "$(requests /sitemap_index.xml)" = 1 ] &&
    [ "$(requests /sitemap-b.xml.gz)" = 1 ] && ok "a new run fetches each sitemap once again" ||
    fail "run 2 sitemap requests: $(grep -c ' /sitemap' "$SITE_LOG")"

# ---- 3. default: no sitemaps
: >"$SITE_LOG"
define webNoSm nosm
expect_crawl webNoSm "crawl without followSitemaps SUCCEEDED"
[ "$(grep -c ' /sitemap\| /orphan/' "$SITE_LOG")" = 0 ] && ok "followSitemaps false: no sitemap and no orphan page requested" ||
    fail "requested: $(grep ' /sitemap\| /orphan/' "$SITE_LOG" | head -3)"

stop_server
finish
