#!/bin/bash
# webCrawler rules of issue 6 that the other web tests do not isolate,
# against sites of web_site.py on 127.0.0.1:
# A: the User-Agent parameter is the header of every request (robots.txt
#    included); Retry-After in seconds (3 s, longer than the host's own
#    backoff of 1 s) is waited for; redirects to file:// and ftp:// are
#    refused (links.skipped.badRedirect), never fetched nor indexed; a
#    redirect to http is followed; a page's record carries httpUrl,
#    httpStatus, httpMimetype, httpCharset, httpLastModified, httpSize and
#    httpDepth, and its ISO-8859-1 text is indexed as UTF-8.
# B: filters.followRedirects false: no redirect is followed
#    (links.skipped.redirects: /r/to-4, the loop, file:, ftp:), the
#    targets reached by links still are.
# C: robots.txt answers 404: allow all (robots.missing), /private/ is
#    crawled.
# D: a linked host's robots.txt answers 500: disallow for the run
#    (robots.unreachable), that host gets the robots.txt request only, and
#    the run SUCCEEDS.
# T: a linked host serving HTTPS with a self-signed certificate: TLS
#    verification is on by default, so it never gets a request (curl -k
#    shows that it serves), the failure is reported and the run SUCCEEDS.
# P: maxConnectionsPerHost 2, no delay, pages that take 0.3 s: the access
#    log never shows more than 2 requests at once (each page counted for
#    the 0.3 s it surely was in flight, any other request at its start),
#    and 2 are reached (the limit holds across the two crawler threads).
# R: respectRobots false (robots.txt never requested, /private/ crawled),
#    filters.contentTypes ["text/html"] (the text and zip resources are
#    refused after their headers and not indexed) and a mapping of
#    httpStatus and httpUrl to other names.
# X: the example job crawlWeb of config/jobs.json is loaded, and its
#    parameters, pointed at a test site, crawl it.
# G: parallel crawler tasks meet a new host H at once (every page of G
#    links a page of H, 3 links per task) while H's robots.txt takes 2 s:
#    it is requested once, and every page of H once.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"
. "$(dirname "$0")/web_lib.sh"

UA="RulesBot/2.0 (+https://example.invalid/rules)"
LASTMOD="Tue, 14 Nov 2023 22:13:20 GMT"

echo '{"status": {"/robots.txt": 404}}' >"$TMP/c.json"
echo '{"status": {"/robots.txt": 500}}' >"$TMP/e.json"
start_site A --pages 10 --rules
start_site B --pages 10 --rules
start_site C --pages 10 --mutate-file "$TMP/c.json"
start_site E --pages 5 --mutate-file "$TMP/e.json"
start_site D --pages 5 --link "$SITE_E/p/0.html"
command -v openssl >/dev/null || { fail "openssl is missing (scripts/install-deps.sh)"; exit 1; }
openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -days 2 \
    -keyout "$TMP/tls.pem" -out "$TMP/tls.crt" 2>/dev/null && cat "$TMP/tls.crt" >>"$TMP/tls.pem"
start_site S --pages 5 --tls "$TMP/tls.pem"
SITE_S=${SITE_S/http:/https:}
start_site T --pages 5 --link "$SITE_S/p/0.html"
SLOW=0.3
start_site P --pages 20 --slow "$SLOW"
start_site R --pages 10
start_site X --pages 3
start_site H --pages 30 --robots-stall 2
start_site G --pages 30 --link-pages "$SITE_H"

start_web_server

# doc ID: the stored document ID of index "default" into $BODY (STATUS)
doc() {
    req GET "/smila/index/default/$(jq -rn --arg v "$1" '$v|@uri')"
}

# ---- A
define_web rulesA "$SITE_A" webA ".politeness.userAgent = \"$UA\""
expect_crawl rulesA "crawl A SUCCEEDED"
n=$(wc -l <"$TMP/A.log.ua")
bad=$(grep -vcF " $UA" "$TMP/A.log.ua" || true)
[ "$n" -gt 10 ] && [ "$bad" = 0 ] && [ "$(requests /robots.txt A)" = 1 ] &&
    ok "every request ($n, robots.txt too) sends the userAgent parameter" ||
    fail "$bad of $n requests without the user agent: $(grep -vF " $UA" "$TMP/A.log.ua" | head -2)"
expect_retry_gap A /fail/429secs 2.9 "the 429 retry waited for Retry-After: 3 (>= 2.9 s)"
expect_counter links.skipped.badRedirect = 2 "redirects to file:// and ftp:// are refused"
expect_requests /r/to-file = 1 "the redirect itself was requested once" A
expect_counter links.redirected -ge 1 "a redirect to http is followed"
index_ids "$TMP/idsA"
[ "$(grep -c '^file:\|^ftp:' "$TMP/idsA")" = 0 ] && grep -qxF "$SITE_A/fail/429secs" "$TMP/idsA" &&
    ok "nothing of another scheme is indexed; the page behind the 429 is" ||
    fail "ids: $(grep '^file:\|^ftp:\|429secs' "$TMP/idsA" | head -3)"
doc "$SITE_A/attr.html"
expect_status 200 "the page's document is stored"
size=$(printf '<html><head><title>Attr</title></head><body>caf\xe9 papa</body></html>' | wc -c)
jq -e --arg u "$SITE_A/attr.html" --arg lm "$LASTMOD" --argjson size "$size" \
    '.httpUrl == $u and .httpStatus == 200 and .httpMimetype == "text/html" and
     (.httpCharset | ascii_downcase) == "iso-8859-1" and .httpLastModified == $lm and
     .httpSize == $size and .httpDepth == 1 and ._deltaHash == ("lm:" + $lm)' "$BODY" >/dev/null &&
    ok "the record's http attributes and delta hash (Last-Modified)" ||
    fail "attributes: $(jq -c '{httpUrl, httpStatus, httpMimetype, httpCharset, httpLastModified, httpSize, httpDepth, _deltaHash}' "$BODY")"
req GET /smila/index/default/search -G --data-urlencode 'q=café'
jq -e --arg u "$SITE_A/attr.html" '[.hits[]._recordid] | index($u) != null' "$BODY" >/dev/null &&
    ok "its ISO-8859-1 text is found as UTF-8" || fail "search café: $(cat "$BODY")"
# the page's Last-Modified and size are its document's modified and size
req GET /smila/index/default/search -G --data-urlencode 'q=café modified:2023-11 size:<1k' \
    --data-urlencode 'sort=date' --data-urlencode 'facets=year'
jq -e --arg u "$SITE_A/attr.html" --argjson size "$size" \
    '(.hits | map(select(._recordid == $u)) | .[0] |
      .modified == "2023-11-14T22:13:20.000Z" and .size == $size) and
     ([.facets.year[].value] | index("2023") != null)' "$BODY" >/dev/null &&
    ok "a web page's Last-Modified and size fill modified and size (modified:, size:, sort, year facet)" ||
    fail "modified and size of a web page: $(cat "$BODY")"

# ---- B
define_web rulesB "$SITE_B" webB '.filters.followRedirects = false'
expect_crawl rulesB "crawl B SUCCEEDED"
expect_counter links.skipped.redirects = 4 "with followRedirects false no redirect is followed (to-4, loop, file, ftp)"
expect_counter links.redirected = 0 "and none is counted as followed"
expect_requests /p/4.html = 1 "a target reached by links is crawled" B

# ---- C
define_web rulesC "$SITE_C" webC
expect_crawl rulesC "crawl C SUCCEEDED"
expect_counter robots.missing = 1 "robots.txt 404 counts as missing"
expect_requests /private/secret.html = 1 "and allows all" C

# ---- D
define_web rulesD "$SITE_D" webD ".filters.urlPatterns.include += [\"^$SITE_E/\"]"
expect_crawl rulesD "crawl D SUCCEEDED (a linked host's robots.txt answers 500)"
expect_counter robots.unreachable = 1 "robots.txt 500 counts as unreachable"
[ "$(wc -l <"$TMP/E.log")" = 1 ] && [ "$(requests /robots.txt E)" = 1 ] &&
    ok "and disallows all: that host got the robots.txt request only" ||
    fail "E log: $(head -3 "$TMP/E.log")"
expect_requests /p/4.html = 1 "the other host is crawled" D

# ---- T
curl -sk -o /dev/null "$SITE_S/p/1.html" && [ "$(wc -l <"$TMP/S.log")" = 1 ] &&
    ok "the HTTPS site serves (curl -k)" || fail "the HTTPS site does not serve"
define_web rulesT "$SITE_T" webT ".filters.urlPatterns.include += [\"^$SITE_S/\"]"
expect_crawl rulesT "crawl T SUCCEEDED (a linked host's certificate is not trusted)"
[ "$(wc -l <"$TMP/S.log")" = 1 ] && ok "the untrusted host got no request" ||
    fail "S log: $(tail -3 "$TMP/S.log")"
expect_counter robots.unreachable = 1 "its robots.txt counts as unreachable"
grep -qi "$SITE_S/robots.txt: .*certificate" "$TMP/server.log" &&
    ok "the log names the certificate" || fail "no certificate error logged: $(grep "$SITE_S" "$TMP/server.log" | head -2)"
expect_requests /p/4.html = 1 "the HTTP host is crawled" T

# ---- P
define_web rulesP "$SITE_P" webP '.politeness.maxConnectionsPerHost = 2'
expect_crawl rulesP "crawl P SUCCEEDED"
most=$(python3 - "$TMP/P.log" "$SLOW" <<'EOF'
import re, sys
# The logged end comes after the body is written, and a loaded machine
# (CI) can delay that thread until the crawler has its answer and sent the
# next request: 3 at once was seen.  A handler starts after the crawler
# sent its request, and a slow page (--slow) answers SLOW seconds later:
# [start, start + SLOW) lies inside the crawler's own request.  So at each
# request's start, the crawler has that request and every slow page whose
# window is open in flight.
slow = float(sys.argv[2])
reqs = [(float(a), bool(re.fullmatch(r"/p/[0-9]+\.html", p)))
        for a, _, _, p in (l.split() for l in open(sys.argv[1]))]
wins = [a for a, s in reqs if s]
print(max((sum(w <= a < w + slow for w in wins) + (not s) for a, s in reqs), default=0))
EOF
)
[ "$most" = 2 ] && ok "at most 2 requests at once, and 2 reached" ||
    fail "requests at once: $most"

# ---- R
define_web rulesR "$SITE_R" webR '.politeness.respectRobots = false |
    .filters.contentTypes = ["text/html"] |
    .mapping = {"httpStatus": "status", "httpUrl": "address"}'
expect_crawl rulesR "crawl R SUCCEEDED"
expect_requests /robots.txt = 0 "respectRobots false: robots.txt is not requested" R
expect_requests /private/secret.html = 1 "and /private/ is crawled" R
expect_counter links.skipped.contentType -ge 2 "contentTypes text/html refuses the text and the zip"
index_ids "$TMP/idsR"
! grep -qxF -e "$SITE_R/doc.txt" -e "$SITE_R/archive.zip" "$TMP/idsR" &&
    grep -qxF "$SITE_R/p/1.html" "$TMP/idsR" &&
    ok "they are not indexed, the pages are" || fail "ids: $(grep -F "$SITE_R/" "$TMP/idsR" | head -5)"
doc "$SITE_R/p/1.html"
jq -e --arg u "$SITE_R/p/1.html" '.status == 200 and .address == $u and
    (has("httpStatus") or has("httpUrl") | not)' "$BODY" >/dev/null &&
    ok "mapping renames httpStatus and httpUrl" || fail "document: $(head -c 300 "$BODY")"

# ---- X
req GET /smila/jobmanager/jobs/crawlWeb/
expect_status 200 "the example job crawlWeb is loaded from config/jobs.json"
jq --arg s "$SITE_X" '.parameters | .startUrl = ($s + "/") |
    .filters.urlPatterns.include = ["^" + $s + "/"] | .dataSource = "webX"' \
    "$BODY" >"$TMP/x.json" && jq -e '.politeness.delayMs == 1000' "$TMP/x.json" >/dev/null ||
    fail "crawlWeb parameters: $(cat "$BODY")"
define_job exampleX webCrawling "$(cat "$TMP/x.json")"
expect_status 200 "its parameters define a job for a test site"
expect_crawl exampleX "crawlWeb's parameters crawl the test site (delayMs 1000)"
expect_requests /p/2.html = 1 "every page once" X

# ---- G
define_web rulesG "$SITE_G" webG \
    ".linksPerBulk = 3 | .filters.urlPatterns.include += [\"^$SITE_H/\"]"
expect_crawl rulesG "crawl G SUCCEEDED"
expect_counter robots.waited -ge 1 "a task waited for another task's robots.txt of H"
expect_requests /robots.txt = 1 "H's robots.txt is requested once by the parallel tasks" H
twice=$(awk '$4 ~ /^\/p\/[0-9]+\.html$/ {n[$4]++} END {for (p in n) if (n[p] != 1) print p}' "$TMP/H.log")
[ "$(grep -c ' /p/[0-9]*\.html$' "$TMP/H.log")" = 30 ] && [ -z "$twice" ] &&
    ok "every page of H is requested once" ||
    fail "H pages: $(grep -c ' /p/[0-9]*\.html$' "$TMP/H.log"), not once: $twice"

stop_server
finish
