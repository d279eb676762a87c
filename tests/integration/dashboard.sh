#!/bin/bash
# The dashboard (GET /, GET /ui/<file>) against the real server:
# - the page and its files are served from the binary with their content
#   types and a Content-Security-Policy; an unknown file is a JSON 404;
# - in headless Chromium (tests/browser/dashboard.py, Selenium): the jobs
#   table, a web crawl (politeness-slowed) started from its button and
#   followed live on the job's page (progress without a reload, the indexing phase, the workflow graph,
#   the workers' counters), the processing job's failed documents, a
#   standard job canceled, paused, resumed and finished from its buttons, a search with
#   highlighted snippets, a narrow screen; no JavaScript error in the
#   console.  Screenshots are kept in <build>/artifacts/dashboard/.
# Skipped (exit 77) where Chromium, ChromeDriver or Selenium is missing or
# Chromium cannot start; in CI (CI=true) that is a failure.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"
. "$(dirname "$0")/web_lib.sh"

[ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ] && /usr/bin/python3 -c 'import selenium' 2>/dev/null ||
    skip "the browser test needs Debian's chromium, chromium-driver and python3-selenium"
ART="${SL_TEST_ARTIFACTS:-$(dirname "$TMPDIR")/artifacts}/dashboard"
rm -rf "$ART" && mkdir -p "$ART"

ROOT="$TMP/tree"
for d in $(seq 1 10); do
    mkdir -p "$ROOT/d$d"
    for f in $(seq 1 100); do
        echo "A grey heron in folder $d, file $f, waits by the water." >"$ROOT/d$d/f$f.txt"
    done
done
printf '#!/bin/sh\necho a shell script\n' >"$ROOT/runme" # its converter fails

import_config "$TMP/config.json" '.textExtractor.converters = {"text/x-shellscript": {"command": ["false"]}}'
start_server --config "$TMP/config.json" --data-dir "$TMP/data"
define_crawl files "$ROOT" fs
expect_crawl files "a file crawl (documents to search, one whose converter fails)"
# the crawl the browser starts and follows: 40 pages a politeness delay
# of 150 ms apart, some 6 s
start_site pages --pages 40
define_web pages "$SITE" web '.politeness = {delayMs: 150, maxConnectionsPerHost: 1}'
req POST /smila/jobmanager/jobs/ -H 'Content-Type: application/json' \
    -d '{"name": "spare", "workflow": "indexUpdate", "parameters": {"index": "spare"}}'
expect_status 200 "a standard job to start, cancel and finish"

req GET /
expect_status 200 "GET / serves the dashboard"
grep -qi '^Content-Type: text/html; charset=utf-8' "$HEADERS" && grep -q '<title>Sluice</title>' "$BODY" &&
    grep -qi "^Content-Security-Policy: default-src 'self'" "$HEADERS" &&
    ok "the page: HTML, a Content-Security-Policy" || fail "GET /: $(cat "$HEADERS")"
req GET /ui/app.js
grep -qi '^Content-Type: text/javascript' "$HEADERS" && cmp -s "$BODY" "$(dirname "$0")/../../dashboard/app.js" &&
    ok "GET /ui/app.js: the repository's file, as JavaScript" || fail "app.js: $(head -3 "$HEADERS")"
req GET /ui/nothing.js
expect_error 404 NOT_FOUND "an unknown dashboard file"

# a second server on a non-loopback address, which needs the API token
import_config "$TMP/token.json" '.listen = "0.0.0.0:0" | .apiToken = "dash-token-1"'
"$SLUICE" serve --config "$TMP/token.json" --data-dir "$TMP/data2" >/dev/null 2>"$TMP/token.log" &
TOKEN_PID=$!
trap 'rc=$?; kill $TOKEN_PID $SITE_PIDS 2>/dev/null; cleanup $rc' EXIT
for i in $(seq 1 200); do
    tport=$(sed -n 's|.*listening on http://[^:]*:\([0-9]*\)/.*|\1|p' "$TMP/token.log" | head -1)
    [ -n "$tport" ] && break
    sleep 0.05
done
TBASE="http://127.0.0.1:${tport:?the token server did not start}"
code=$(curl -s -o /dev/null -w '%{http_code}' "$TBASE/")
code2=$(curl -s -o /dev/null -w '%{http_code}' "$TBASE/smila/jobmanager/jobs/")
[ "$code" = 200 ] && [ "$code2" = 401 ] &&
    ok "with a token required, the page loads without it (it holds no data) and the API does not" ||
    fail "token server: GET / $code, GET jobs $code2"

rc=0
/usr/bin/python3 "$(dirname "$0")/../browser/dashboard.py" "$BASE" pages spare indexUpdate "$ART" "$TBASE" dash-token-1 \
    >"$TMP/browser.out" 2>"$TMP/browser.err" || rc=$?
cat "$TMP/browser.out"
if [ "$rc" = 77 ]; then
    skip "$(grep -m1 '^SKIP' "$TMP/browser.out" || tail -1 "$TMP/browser.err")"
fi
PASSES=$((PASSES + $(grep -c '^ok - ' "$TMP/browser.out" || true)))
FAILS=$((FAILS + $(grep -c '^FAIL - ' "$TMP/browser.out" || true)))
if [ "$rc" != 0 ] && ! grep -q '^FAIL - ' "$TMP/browser.out"; then
    fail "the browser test exited $rc: $(tail -5 "$TMP/browser.err")"
fi
n=$(ls "$ART"/*.png 2>/dev/null | wc -l)
[ "$n" -ge 6 ] && ok "$n screenshots kept in $ART" || fail "screenshots: $n in $ART"

stop_server
finish
