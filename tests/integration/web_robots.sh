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
. "$(dirname "$0")/web_lib.sh"

start_site A --pages 10 --robots-redirect 5 --retry-date
start_site C --pages 10
start_site B --pages 10 --robots-to "$SITE_C/robots-shared.txt"
start_site D --pages 10 --robots-redirect 6

start_web_server

define() { # NAME SOURCE SITE: 2 connections per host
    define_web "$1" "$3" "$2" '.filters.maxSize = 1048576 | .politeness.maxConnectionsPerHost = 2'
}

# ---- A: five redirects, and Retry-After as an HTTP date
define robotsA webA "$SITE_A"
expect_crawl robotsA "crawl A SUCCEEDED"
[ "$(counter robots.redirected)" = 5 ] && [ "$(counter robots.fetched)" = 1 ] &&
    ok "robots.txt followed through 5 redirects and fetched" ||
    fail "robots.redirected $(counter robots.redirected), fetched $(counter robots.fetched), unreachable $(counter robots.unreachable)"
for p in /robots.txt /rr/1 /rr/2 /rr/3 /rr/4 /robots-real.txt; do
    [ "$(requests "$p" A)" = 1 ] || fail "A $p requested $(requests "$p" A) times"
done
ok "each hop was requested once"
[ "$(grep -c ' /private/\| /p/7.html$' "$TMP/A.log")" = 0 ] && ok "the redirected robots.txt's rules hold" ||
    fail "disallowed URLs requested: $(grep ' /private/\| /p/7.html$' "$TMP/A.log" | head -3)"
expect_requests /p/6.html = 1 "allowed pages are crawled" A
expect_retry_gap A /fail/429date 1.9 "the 429 retry waited for the HTTP-date Retry-After (>= 1.9 s)"
snapshot "$TMP/sA"
grep -qF "$SITE_A/fail/429date	" "$TMP/sA" && ok "the page behind the 429 is indexed" || fail "/fail/429date not indexed"

# ---- B: robots.txt on another host
define robotsB webB "$SITE_B"
expect_crawl robotsB "crawl B SUCCEEDED"
[ "$(wc -l <"$TMP/C.log")" = 1 ] && [ "$(requests /robots-shared.txt C)" = 1 ] &&
    ok "the other host got exactly the robots.txt request" || fail "C log: $(head -3 "$TMP/C.log")"
[ "$(requests /p/8.html B)" = 0 ] && [ "$(requests /p/7.html B)" = 1 ] &&
    [ "$(requests /private/secret.html B)" = 1 ] &&
    ok "the other host's robots.txt rules B (only /p/8.html disallowed)" ||
    fail "B: p/8 $(requests /p/8.html B), p/7 $(requests /p/7.html B), private $(requests /private/secret.html B)"

# ---- D: six redirects
define robotsD webD "$SITE_D"
expect_crawl robotsD "crawl D SUCCEEDED"
[ "$(counter robots.tooManyRedirects)" = 1 ] && [ "$(requests /robots-real.txt D)" = 0 ] &&
    [ "$(requests /rr/5 D)" = 1 ] && ok "more than 5 redirects are not followed" ||
    fail "tooManyRedirects $(counter robots.tooManyRedirects), real $(requests /robots-real.txt D), rr/5 $(requests /rr/5 D)"
expect_requests /private/secret.html = 1 "and robots.txt counts as unavailable (allow all)" D

stop_server
finish
