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

SITE_LOG="$TMP/access.log"
MUTATE="$TMP/mutate.json"
python3 "$SRC/tests/integration/web_site.py" --port-file "$TMP/site.port" \
    --log "$SITE_LOG" --mutate-file "$MUTATE" --pages 12 --noindex &
SITE_PID=$!
trap 'kill $SITE_PID 2>/dev/null; cleanup' EXIT
for _ in $(seq 1 100); do [ -s "$TMP/site.port" ] && break; sleep 0.05; done
SITE="http://127.0.0.1:$(cat "$TMP/site.port")"

import_config "$TMP/config.json"
start_server --config "$TMP/config.json" --data-dir "$TMP/data"

params=$(jq -cn --arg url "$SITE/" --arg inc "^$SITE/" \
    '{dataSource: "robotsmeta", startUrl: $url, jobToPushTo: "indexUpdate",
      deltaImportStrategy: "full", filters: {urlPatterns: {include: [$inc]}},
      politeness: {delayMs: 0, maxConnectionsPerHost: 4,
                   userAgent: "SluiceBot/0.1 (+https://example.invalid)"}}')
req POST /smila/jobmanager/jobs/ -H 'Content-Type: application/json' \
    -d "{\"name\": \"webNoindex\", \"workflow\": \"webCrawling\", \"parameters\": $params}"
expect_status 200 "crawl job defined"

expected() {
    python3 "$SRC/tests/integration/web_site.py" --pages 12 --noindex --expected | sed "s|^|$SITE|"
}
requested() { grep -c " $1\$" "$SITE_LOG"; }
index_ids() { snapshot "$TMP/snap"; ids "$TMP/snap" | LC_ALL=C sort >"$1"; }

# ---- 1. first crawl
if crawl webNoindex; then ok "crawl SUCCEEDED"; else fail "crawl: $(cat "$TMP/crawl.err")"; fi
index_ids "$TMP/got1"
expected | LC_ALL=C sort >"$TMP/want1"
if diff "$TMP/want1" "$TMP/got1" >"$TMP/diff"; then
    ok "the index holds every page but the noindex ones ($(wc -l <"$TMP/want1"))"
else
    fail "index differs: $(head -c 800 "$TMP/diff")"
fi
for p in /ni/meta.html /ni/none.html /ni/header.html /ni/doc.txt; do
    [ "$(requested $p)" -ge 1 ] || fail "$p was not even requested"
done
[ "$(requested /ni/child1.html)" = 1 ] && [ "$(requested /ni/child2.html)" = 1 ] &&
    ok "the links of noindex pages (meta and header) are followed" ||
    fail "child requests: $(requested /ni/child1.html) $(requested /ni/child2.html)"
[ "$(requested /ni/child-none.html)" = 0 ] && ok "meta robots none stops the links" ||
    fail "/ni/child-none.html was requested"
[ "$(requested /ni/child3.html)" = 0 ] && ok "X-Robots-Tag: nofollow stops the links" ||
    fail "/ni/child3.html was requested"
[ "$(counter records.noindex)" = 4 ] && ok "records.noindex = 4 (meta, none, header, a text resource)" ||
    fail "records.noindex = $(counter records.noindex)"
"$SLUICE" search --server "$BASE" foxtrot >"$TMP/hits" 2>/dev/null
grep -qF "$SITE/ni/doc.txt" "$TMP/hits" && fail "the noindex resource is searchable" ||
    ok "a resource with X-Robots-Tag: noindex is not indexed"

# ---- 2. indexed pages become noindex
echo '{"noindex": ["/p/7.html"], "xnoindex": ["/p/8.html"]}' >"$MUTATE"
: >"$SITE_LOG"
if crawl webNoindex; then ok "re-crawl SUCCEEDED"; else fail "re-crawl: $(cat "$TMP/crawl.err")"; fi
wait_indexed
index_ids "$TMP/got2"
grep -v -e "^$SITE/p/7.html\$" -e "^$SITE/p/8.html\$" "$TMP/want1" >"$TMP/want2"
if diff "$TMP/want2" "$TMP/got2" >"$TMP/diff"; then
    ok "pages that became noindex (meta, X-Robots-Tag) left the index, the rest stays"
else
    fail "after noindex: $(head -c 800 "$TMP/diff")"
fi
[ "$(counter records.noindex)" = 6 ] && ok "records.noindex = 6" ||
    fail "records.noindex = $(counter records.noindex)"
[ "$(counter entries.removed)" = 2 ] && ok "the delta-delete removed their entries" ||
    fail "entries.removed = $(counter entries.removed)"

# ---- 3. indexable again
rm -f "$MUTATE"
if crawl webNoindex; then ok "third crawl SUCCEEDED"; else fail "crawl 3: $(cat "$TMP/crawl.err")"; fi
wait_indexed
index_ids "$TMP/got3"
cmp -s "$TMP/want1" "$TMP/got3" && ok "without the directives they are indexed again" ||
    fail "after the directives went: $(diff "$TMP/want1" "$TMP/got3" | head -c 600)"
[ "$(counter records.pushed)" = 2 ] && ok "only those two are pushed" ||
    fail "records.pushed = $(counter records.pushed)"

stop_server
finish
