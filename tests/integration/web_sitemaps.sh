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

SITE_LOG="$TMP/access.log"
python3 "$SRC/tests/integration/web_site.py" --port-file "$TMP/site.port" \
    --log "$SITE_LOG" --pages 10 --sitemaps &
SITE_PID=$!
trap 'kill $SITE_PID 2>/dev/null; cleanup' EXIT
for _ in $(seq 1 100); do [ -s "$TMP/site.port" ] && break; sleep 0.05; done
SITE="http://127.0.0.1:$(cat "$TMP/site.port")"

import_config "$TMP/config.json"
start_server --config "$TMP/config.json" --data-dir "$TMP/data"

define() { # NAME SOURCE [extra parameters]
    local params
    params=$(jq -cn --arg url "$SITE/" --arg src "$2" --arg inc "^$SITE/" --arg exc "^$SITE/skip/" \
        --argjson extra "${3:-{\}}" \
        '{dataSource: $src, startUrl: $url, jobToPushTo: "indexUpdate",
          filters: {urlPatterns: {include: [$inc], exclude: [$exc]}},
          politeness: {delayMs: 0, maxConnectionsPerHost: 4}} * $extra')
    req POST /smila/jobmanager/jobs/ -H 'Content-Type: application/json' \
        -d "{\"name\": \"$1\", \"workflow\": \"webCrawling\", \"parameters\": $params}"
    [ "$STATUS" = 200 ] || { echo "define $1: $STATUS $(cat "$BODY")" >&2; return 1; }
}
requests() {
    grep -c " $1\$" "$SITE_LOG" || true
}

# ---- 1. followSitemaps
define webSm sm '{"followSitemaps": true}'
if crawl webSm; then ok "crawl with followSitemaps SUCCEEDED"; else fail "crawl: $(cat "$TMP/crawl.err")"; fi
snapshot "$TMP/s1"
ids "$TMP/s1" | LC_ALL=C sort >"$TMP/got1"
python3 "$SRC/tests/integration/web_site.py" --expected --pages 10 --sitemaps | sed "s|^|$SITE|" |
    LC_ALL=C sort >"$TMP/want1"
if diff "$TMP/want1" "$TMP/got1" >"$TMP/diff"; then
    ok "the pages only the sitemaps name are indexed with the rest ($(wc -l <"$TMP/want1"))"
else
    fail "index ids differ: $(head -c 800 "$TMP/diff")"
fi
for p in /sitemap_index.xml /sitemap-a.xml /sitemap-b.xml.gz /p/0.html /orphan/1.html; do
    [ "$(requests "$p")" = 1 ] || fail "$p requested $(requests "$p") times, want 1"
done
ok "each sitemap (also one listed twice) and each page was requested once"
[ "$(requests /private/hidden.html)" = 0 ] && ok "a sitemap URL robots.txt disallows is not requested" ||
    fail "/private/hidden.html requested"
[ "$(requests /skip/x.html)" = 0 ] && ok "a sitemap URL urlPatterns excludes is not requested" ||
    fail "/skip/x.html requested"
[ "$(counter sitemaps.fetched)" = 3 ] && ok "3 sitemaps fetched (an index, a plain and a gzip one)" ||
    fail "sitemaps.fetched = $(counter sitemaps.fetched), failed $(counter sitemaps.failed)"
[ "$(counter links.fromSitemaps)" = 5 ] && ok "5 sitemap URLs became links (another host's and the excluded one did not)" ||
    fail "links.fromSitemaps = $(counter links.fromSitemaps)"
oid=$(jq -rn --arg id "$SITE/orphan/3.html" '$id | @uri')
curl -sS -o "$TMP/doc.json" "$BASE/smila/index/default/$oid"
jq -e '.httpDepth == 1' "$TMP/doc.json" >/dev/null && ok "sitemap URLs have depth 1" ||
    fail "orphan/3.html: $(head -c 400 "$TMP/doc.json")"
"$SLUICE" search --server "$BASE" oscar >"$TMP/hits" 2>/dev/null
[ "$(grep -c "$SITE/orphan/" "$TMP/hits")" = 3 ] && ok "the orphan pages are searchable" ||
    fail "search oscar: $(cat "$TMP/hits")"

# ---- 2. once per host and run
: >"$SITE_LOG"
if crawl webSm; then ok "second run SUCCEEDED"; else fail "run 2: $(cat "$TMP/crawl.err")"; fi
[ "$(requests /sitemap-a.xml)" = 1 ] && [ "$(requests /sitemap_index.xml)" = 1 ] &&
    [ "$(requests /sitemap-b.xml.gz)" = 1 ] && ok "a new run fetches each sitemap once again" ||
    fail "run 2 sitemap requests: $(grep -c ' /sitemap' "$SITE_LOG")"

# ---- 3. default: no sitemaps
: >"$SITE_LOG"
define webNoSm nosm
if crawl webNoSm; then ok "crawl without followSitemaps SUCCEEDED"; else fail "crawl 3: $(cat "$TMP/crawl.err")"; fi
[ "$(grep -c ' /sitemap\| /orphan/' "$SITE_LOG")" = 0 ] && ok "followSitemaps false: no sitemap and no orphan page requested" ||
    fail "requested: $(grep ' /sitemap\| /orphan/' "$SITE_LOG" | head -3)"

stop_server
finish
