#!/bin/bash
# Web import end to end (issue 6, first part): the repository's
# webCrawling workflow against a generated site on 127.0.0.1
# (tests/integration/web_site.py, with an access log).
# 1. a crawl with politeness off: every allowed page (cycles, relative
#    links, <base>, fragments, a redirect, non-HTML resources) is in the
#    index exactly once; the redirect loop, the page over maxSize, the 404
#    and the rel=nofollow link are not; nothing under /private/ (robots.txt)
#    was requested, robots.txt was requested once, every page once;
# 2. a re-crawl with no change pushes nothing;
# 3. a changed and a removed page: updated and deleted (strategy full);
# 4. maxCrawlDepth 1 in another source: only the start page and its links.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"

SITE_LOG="$TMP/access.log"
MUTATE="$TMP/mutate.json"
python3 "$SRC/tests/integration/web_site.py" --port-file "$TMP/site.port" \
    --log "$SITE_LOG" --mutate-file "$MUTATE" &
SITE_PID=$!
trap 'kill $SITE_PID 2>/dev/null; cleanup' EXIT
for _ in $(seq 1 100); do [ -s "$TMP/site.port" ] && break; sleep 0.05; done
SITE="http://127.0.0.1:$(cat "$TMP/site.port")"

import_config "$TMP/config.json"
start_server --config "$TMP/config.json" --data-dir "$TMP/data"

# define_web NAME SOURCE [extra parameters as a JSON object]
define_web() {
    local params
    params=$(jq -cn --arg url "$SITE/" --arg src "$2" --arg inc "^$SITE/" --argjson extra "${3:-{\}}" \
        '{dataSource: $src, startUrl: $url, jobToPushTo: "indexUpdate",
          filters: {urlPatterns: {include: [$inc]}},
          politeness: {delayMs: 0, maxConnectionsPerHost: 4}} * $extra')
    req POST /smila/jobmanager/jobs/ -H 'Content-Type: application/json' \
        -d "{\"name\": \"$1\", \"workflow\": \"webCrawling\", \"parameters\": $params}"
    [ "$STATUS" = 200 ] || { echo "define_web $1: $STATUS $(cat "$BODY")" >&2; return 1; }
}

expected() {
    python3 "$SRC/tests/integration/web_site.py" --expected | sed "s|^|$SITE|" | LC_ALL=C sort
}

# ---- 1. initial crawl
define_web web1 site1
if crawl web1; then ok "initial web crawl SUCCEEDED"; else fail "initial crawl: $(cat "$TMP/crawl.err")"; fi
snapshot "$TMP/s1"
ids "$TMP/s1" | LC_ALL=C sort >"$TMP/got1"
expected >"$TMP/want1"
if diff "$TMP/want1" "$TMP/got1" >"$TMP/diff"; then
    ok "every allowed page and resource is in the index once ($(wc -l <"$TMP/want1"))"
else
    fail "index ids differ from the site: $(head -c 800 "$TMP/diff")"
fi
grep -q " /private/" "$SITE_LOG" && fail "a disallowed page was requested: $(grep ' /private/' "$SITE_LOG")" ||
    ok "nothing under /private/ (robots.txt) was requested"
[ "$(grep -c ' /robots.txt$' "$SITE_LOG")" = 1 ] && ok "robots.txt was requested once" ||
    fail "robots.txt requests: $(grep -c ' /robots.txt$' "$SITE_LOG")"
dups=$(awk '$4 != "/robots.txt" && $4 != "/doc.txt" && $4 != "/archive.zip" {print $4}' "$SITE_LOG" | sort | uniq -d)
[ -z "$dups" ] && ok "no page was requested twice (resources with a validator: headers, then content)" || fail "requested twice: $dups"
grep -q " /p/nofollow.html$" "$SITE_LOG" && fail "a rel=nofollow link was followed" ||
    ok "rel=nofollow links are not followed"
[ "$(counter links.skipped.tooLarge)" = 1 ] && ok "the page over maxSize is counted" ||
    fail "links.skipped.tooLarge = $(counter links.skipped.tooLarge)"
[ "$(counter links.failed.client)" -ge 1 ] && ok "the 404 is counted" ||
    fail "links.failed.client = $(counter links.failed.client)"
[ "$(counter links.redirected)" -ge 2 ] && ok "redirects are followed as links" ||
    fail "links.redirected = $(counter links.redirected)"
grep -q " /loop/a$" "$SITE_LOG" && [ "$(grep -c ' /loop/a$' "$SITE_LOG")" = 1 ] &&
    ok "the redirect loop ends at the visited links" ||
    fail "loop requests: $(grep -c ' /loop/' "$SITE_LOG")"
req GET "/smila/jobmanager/jobs/web1/$RUN/"
expect_jq '.state == "SUCCEEDED"' "the run SUCCEEDED with the failures counted"
"$SLUICE" search --server "$BASE" delta >"$TMP/hits" 2>/dev/null
grep -qF "$SITE/doc.txt" "$TMP/hits" && ok "a non-HTML resource is fetched by the webFetcher and its text indexed" ||
    fail "search delta: $(cat "$TMP/hits")"
[ "$(grep -c ' /doc.txt$' "$SITE_LOG")" = 2 ] && ok "it was requested twice: headers by the crawler, content by the fetcher" ||
    fail "/doc.txt requests: $(grep -c ' /doc.txt$' "$SITE_LOG")"
"$SLUICE" search --server "$BASE" charlie >"$TMP/hits" 2>/dev/null
grep -qF "$SITE/p/sub/b.html" "$TMP/hits" && ok "a page reached through <base> is searchable" ||
    fail "search charlie: $(cat "$TMP/hits")"

# ---- 2. no change
: >"$SITE_LOG"
if crawl web1; then ok "re-crawl SUCCEEDED"; else fail "re-crawl: $(cat "$TMP/crawl.err")"; fi
[ "$(counter records.pushed)" = 0 ] && ok "a re-crawl with no change pushes nothing" ||
    fail "pushed $(counter records.pushed) on a no-change re-crawl"
[ "$(counter entries.removed)" = 0 ] && ok "and deletes nothing" ||
    fail "removed $(counter entries.removed)"
[ "$(grep -c ' /doc.txt$' "$SITE_LOG")" = 1 ] && ok "an unchanged resource is not fetched again (headers only)" ||
    fail "/doc.txt requests in the re-crawl: $(grep -c ' /doc.txt$' "$SITE_LOG")"

# ---- 3. changed and removed pages
echo '{"change": ["/p/7.html"], "remove": ["/p/sub/b.html"]}' >"$MUTATE"
if crawl web1; then ok "crawl after changes SUCCEEDED"; else fail "crawl 3: $(cat "$TMP/crawl.err")"; fi
wait_indexed
snapshot "$TMP/s3"
grep -qF "$SITE/p/sub/b.html" "$TMP/s3" && fail "the removed page is still indexed" ||
    ok "the removed page is deleted from the index"
[ "$(counter records.pushed)" = 1 ] && ok "only the changed page is pushed" ||
    fail "pushed $(counter records.pushed), want 1"
"$SLUICE" search --server "$BASE" changed >"$TMP/hits" 2>/dev/null
grep -qF "$SITE/p/7.html" "$TMP/hits" && ok "the changed page is updated" ||
    fail "search changed: $(cat "$TMP/hits")"
rm -f "$MUTATE"

# ---- 4. depth limit
define_web webShallow site2 '{"filters": {"maxCrawlDepth": 1}}'
: >"$SITE_LOG"
if crawl webShallow; then ok "shallow crawl SUCCEEDED"; else fail "shallow: $(cat "$TMP/crawl.err")"; fi
got=$(awk '$4 != "/robots.txt" {print $4}' "$SITE_LOG" | sort -u | tr '\n' ' ')
[ "$got" = "/ /p/0.html /p/1.html " ] && ok "maxCrawlDepth 1: the start page and its links only" ||
    fail "maxCrawlDepth 1 requested: $got"

stop_server
finish
