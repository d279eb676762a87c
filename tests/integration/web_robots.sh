#!/bin/bash
# webCrawler: robots.txt that redirects (RFC 9309 2.3.1.2) and Retry-After
# as an HTTP date (issue 6), against sites of web_site.py on 127.0.0.1.
# A: robots.txt reaches its file after 5 redirects (301/302 alternating):
#    its rules hold (/private/ and /p/7.html are never requested), every
#    hop is requested once; page 6 links a URL answering 429 once with
#    Retry-After as an HTTP date 3 s ahead: the retry waits for it (the
#    host's own backoff would retry after 1 s) and the page is indexed.
# B: robots.txt redirects to another host C: C's file rules B (B's
#    /p/8.html is not requested, its /p/7.html and /private/ are), C gets
#    exactly that one request.
# D: 6 redirects: more than 5, robots.txt is taken as unavailable (allow
#    all, RFC 9309 2.3.1.2 and 2.3.1.3): the sixth target is not
#    requested and /private/ is crawled.
# Every run SUCCEEDS.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"

PIDS=""
trap 'kill $PIDS 2>/dev/null; cleanup' EXIT
start_site() { # NAME [extra args]
    local name=$1
    shift
    python3 "$SRC/tests/integration/web_site.py" --port-file "$TMP/$name.port" \
        --log "$TMP/$name.log" --pages 10 "$@" &
    PIDS="$PIDS $!"
    for _ in $(seq 1 100); do [ -s "$TMP/$name.port" ] && break; sleep 0.05; done
    eval "SITE_$name=http://127.0.0.1:$(cat "$TMP/$name.port")"
}
start_site A --robots-redirect 5 --retry-date
start_site C
start_site B --robots-to "$SITE_C/robots-shared.txt"
start_site D --robots-redirect 6

import_config "$TMP/config.json"
start_server --config "$TMP/config.json" --data-dir "$TMP/data"

define() { # NAME SOURCE SITE
    local params
    params=$(jq -cn --arg src "$2" --arg url "$3/" --arg inc "^$3/" \
        '{dataSource: $src, startUrl: $url, jobToPushTo: "indexUpdate",
          filters: {urlPatterns: {include: [$inc]}, maxSize: 1048576},
          politeness: {delayMs: 0, maxConnectionsPerHost: 2}}')
    req POST /smila/jobmanager/jobs/ -H 'Content-Type: application/json' \
        -d "{\"name\": \"$1\", \"workflow\": \"webCrawling\", \"parameters\": $params}"
    [ "$STATUS" = 200 ] || { echo "define $1: $STATUS $(cat "$BODY")" >&2; return 1; }
}
requests() { # SITE PATH
    grep -c " $2\$" "$TMP/$1.log" || true
}

# ---- A: five redirects, and Retry-After as an HTTP date
define robotsA webA "$SITE_A"
if crawl robotsA; then ok "crawl A SUCCEEDED"; else fail "crawl A: $(cat "$TMP/crawl.err")"; fi
[ "$(counter robots.redirected)" = 5 ] && [ "$(counter robots.fetched)" = 1 ] &&
    ok "robots.txt followed through 5 redirects and fetched" ||
    fail "robots.redirected $(counter robots.redirected), fetched $(counter robots.fetched), unreachable $(counter robots.unreachable)"
for p in /robots.txt /rr/1 /rr/2 /rr/3 /rr/4 /robots-real.txt; do
    [ "$(requests A "$p")" = 1 ] || fail "A $p requested $(requests A "$p") times"
done
ok "each hop was requested once"
[ "$(grep -c ' /private/\| /p/7.html$' "$TMP/A.log")" = 0 ] && ok "the redirected robots.txt's rules hold" ||
    fail "disallowed URLs requested: $(grep ' /private/\| /p/7.html$' "$TMP/A.log" | head -3)"
[ "$(requests A /p/6.html)" = 1 ] && ok "allowed pages are crawled" || fail "A /p/6.html: $(requests A /p/6.html)"
python3 - "$TMP/A.log" <<'EOF' && ok "the 429 retry waited for the HTTP-date Retry-After (>= 1.9 s)" || fail "the 429 retry came too soon"
import sys
rows = [l.split() for l in open(sys.argv[1])]
r = [(float(a), float(b)) for a, b, _, p in rows if p == "/fail/429date"]
print("requests of /fail/429date:", len(r), ["%.2f" % (r[1][0] - r[0][1])] if len(r) == 2 else "")
sys.exit(0 if len(r) == 2 and r[1][0] - r[0][1] >= 1.9 else 1)
EOF
snapshot "$TMP/sA"
grep -qF "$SITE_A/fail/429date	" "$TMP/sA" && ok "the page behind the 429 is indexed" || fail "/fail/429date not indexed"

# ---- B: robots.txt on another host
define robotsB webB "$SITE_B"
if crawl robotsB; then ok "crawl B SUCCEEDED"; else fail "crawl B: $(cat "$TMP/crawl.err")"; fi
[ "$(wc -l <"$TMP/C.log")" = 1 ] && [ "$(requests C /robots-shared.txt)" = 1 ] &&
    ok "the other host got exactly the robots.txt request" || fail "C log: $(head -3 "$TMP/C.log")"
[ "$(requests B /p/8.html)" = 0 ] && [ "$(requests B /p/7.html)" = 1 ] &&
    [ "$(requests B /private/secret.html)" = 1 ] &&
    ok "the other host's robots.txt rules B (only /p/8.html disallowed)" ||
    fail "B: p/8 $(requests B /p/8.html), p/7 $(requests B /p/7.html), private $(requests B /private/secret.html)"

# ---- D: six redirects
define robotsD webD "$SITE_D"
if crawl robotsD; then ok "crawl D SUCCEEDED"; else fail "crawl D: $(cat "$TMP/crawl.err")"; fi
[ "$(counter robots.tooManyRedirects)" = 1 ] && [ "$(requests D /robots-real.txt)" = 0 ] &&
    [ "$(requests D /rr/5)" = 1 ] && ok "more than 5 redirects are not followed" ||
    fail "tooManyRedirects $(counter robots.tooManyRedirects), real $(requests D /robots-real.txt), rr/5 $(requests D /rr/5)"
[ "$(requests D /private/secret.html)" = 1 ] && ok "and robots.txt counts as unavailable (allow all)" ||
    fail "D /private/secret.html: $(requests D /private/secret.html)"

stop_server
finish
