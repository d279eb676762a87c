#!/bin/bash
# Web import, failure handling (issue 6): a site whose page 6 links a URL
# answering 500, one answering 429 with Retry-After: 1 twice before it
# answers, one that stalls past the timeout and one that resets the
# connection; and a second host, linked from the first, whose robots.txt
# times out.
# - the runs end SUCCEEDED, every failure is counted in the run data;
# - the 429 URL is tried again no sooner than Retry-After and indexed;
# - a host whose robots.txt cannot be fetched is not crawled at all in
#   that run (never "allow all" on a failure); when it is the start URL's,
#   nothing was crawled and the run FAILS (so a full crawl deletes
#   nothing, web_startfail.sh);
# - the server's peak RSS stays bounded.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"
. "$(dirname "$0")/web_lib.sh"

start_site R --pages 10 --robots-stall 6
start_site F --pages 10 --failures --link "$SITE_R/"

start_web_server

define() { # NAME SOURCE SITE [OTHER_SITE]: timeoutMs 2 s, 2 connections per host
    define_web "$1" "$3" "$2" ".timeoutMs = 2000 | .filters.urlPatterns.include += [\"^${4:-$3}/\"] |
        .filters.maxSize = 1048576 | .politeness.maxConnectionsPerHost = 2"
}

define failing webF "$SITE_F" "$SITE_R"
expect_crawl failing "a crawl with failing URLs SUCCEEDED"
[ "$(jq -r .state "$RUNJSON")" = SUCCEEDED ] && ok "run state SUCCEEDED" || fail "state $(jq -r .state "$RUNJSON")"
expect_counter links.failed.server -ge 1 "the 500 is counted (links.failed.server)"
expect_counter links.failed.network -ge 2 "the stall and the reset are counted (links.failed.network = $(counter links.failed.network))"
expect_counter links.retried -ge 2 "the 429 URL was retried ($(counter links.retried))"
python3 - "$TMP/F.log" <<'EOF' && ok "the 429 retries waited for Retry-After (1 s)" || fail "429 retries came too soon"
import sys
t = sorted(float(l.split()[0]) for l in open(sys.argv[1]) if l.split()[3] == "/fail/429")
print("requests of /fail/429:", len(t))
sys.exit(0 if len(t) == 3 and all(b - a >= 0.98 for a, b in zip(t, t[1:])) else 1)
EOF
snapshot "$TMP/s1"
grep -qF "$SITE_F/fail/429	" "$TMP/s1" && ok "the URL answered after the 429s is indexed" ||
    fail "/fail/429 not in the index"
[ "$(awk -v p="$SITE_F/fail/" 'index($1, p) == 1 && $1 !~ /429$/' "$TMP/s1" | wc -l)" = 0 ] &&
    ok "the failed URLs are not indexed" || fail "a failed URL is indexed"
"$SLUICE" job status failing --server "$BASE" --json >"$TMP/status.json" 2>/dev/null
jq -e '[.worker[] | to_entries[] | select(.key | startswith("links.failed"))] | length >= 2' "$TMP/status.json" >/dev/null &&
    ok "the failures are reported in the run data" || fail "run data: $(head -c 400 "$TMP/status.json")"
missing=""
for u in /fail/500 /fail/stall /fail/reset; do
    grep -q "webCrawler: $SITE_F$u: " "$TMP/server.log" || missing="$missing $u"
done
[ -z "$missing" ] && ok "the log names each failed URL with its reason" ||
    fail "not logged:$missing ($(grep -c 'webCrawler: ' "$TMP/server.log") crawler lines)"
[ "$(counter robots.unreachable)" = 1 ] && [ "$(awk '$4 != "/robots.txt"' "$TMP/R.log" | wc -l)" = 0 ] &&
    ok "the linked host whose robots.txt times out is not crawled, and the run still SUCCEEDED" ||
    fail "robots.unreachable = $(counter robots.unreachable), R requests: $(awk '{print $4}' "$TMP/R.log" | tr '\n' ' ')"

define robotsDown webR "$SITE_R"
crawl robotsDown && fail "a crawl whose start host's robots.txt times out SUCCEEDED" ||
    ok "a crawl whose start host's robots.txt times out FAILED (no start URL could be crawled)"
jq -e '.errors | tostring | test("robots.txt of .* unreachable")' "$RUNJSON" >/dev/null &&
    ok "the run data says robots.txt was unreachable" || fail "errors: $(jq -c .errors "$RUNJSON" | head -c 300)"
expect_counter robots.unreachable = 1 "robots.txt unreachable is counted"
others=$(awk '$4 != "/robots.txt"' "$TMP/R.log" | wc -l)
[ "$others" = 0 ] && ok "nothing else of that host was fetched (disallow all on failure)" ||
    fail "$others other requests: $(awk '{print $4}' "$TMP/R.log" | head -5 | tr '\n' ' ')"

rss=$(awk '/^VmHWM/ { print $2 }' "/proc/$SERVER_PID/status")
[ "$rss" -lt $((300 * 1024)) ] && ok "peak RSS $((rss / 1024)) MiB < 300 MiB" || fail "peak RSS $((rss / 1024)) MiB"

stop_server
finish
