#!/bin/bash
# webCrawler followSitemaps with big sitemaps (review of 497da89): the
# robots.txt of the site below names four sitemaps of 50,000 URLs each,
# and linksPerBulk is 10, so the task that reads them would write 20,000
# output bulks.  Asserted:
# - the run SUCCEEDS; the task writes at most 10,000 sitemap URLs
#   (links.fromSitemaps) and counts the sitemaps it cut or skipped
#   (sitemaps.truncated);
# - the server's open descriptors stay bounded while the task runs (a
#   closed output bulk is sealed: before, each held its shadow file open
#   until the commit, 1,000 here and 20,000 without the cap);
# - the server's peak RSS grows by less than 200 MiB (each pending bulk
#   held a 64 KiB writer buffer: 1.3 GB for 20,000).
# The sitemap URLs are disallowed by robots.txt, so the follow-up tasks
# drop them without requests.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"
. "$(dirname "$0")/web_lib.sh"

# (the crawler cuts the sitemaps it does not read to the end: py_site's
# server ignores those connection errors)
py_site <<'EOF'
N, PER = 4, 50000
class H(Base):
    def do_GET(self):
        p = self.path
        if p == "/robots.txt":
            body = "User-agent: *\nDisallow: /s/\n" + "".join(
                "Sitemap: /sm/%d.xml\n" % k for k in range(N))
            return self.send("text/plain", body.encode())
        if p == "/":
            return self.send("text/html", b"<html><body>start</body></html>")
        if p.startswith("/sm/") and p.endswith(".xml"):
            k = p[4:-4]
            body = ('<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/'
                    'schemas/sitemap/0.9">' + "".join(
                        "<url><loc>/s/%s/%d.html</loc></url>" % (k, i) for i in range(PER))
                    + "</urlset>")
            return self.send("application/xml", body.encode())
        self.not_found()
EOF

# under AddressSanitizer freed memory waits in a quarantine (256 MiB) and
# counts in the RSS: keep it small, so the peak shows what is held
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=1"
start_web_server

define_web bigSm "$SITE" bigsm 'del(.filters) | .followSitemaps = true | .linksPerBulk = 10'

fds() { find "/proc/$SERVER_PID/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
rss_kib() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$SERVER_PID/status"; }
fd0=$(fds)
rss0=$(rss_kib)
# Sample the descriptors while the crawl runs (a bound, not a timing).
(
    max=0
    while [ -d "/proc/$SERVER_PID" ] && [ ! -e "$TMP/stop" ]; do
        n=$(fds)
        [ "$n" -gt "$max" ] && { max=$n; echo "$max" >"$TMP/fdmax"; }
        sleep 0.02
    done
) &
SAMPLER=$!
expect_crawl bigSm "crawl of four 50,000-URL sitemaps SUCCEEDED"
touch "$TMP/stop"
wait $SAMPLER
fdmax=$(cat "$TMP/fdmax" 2>/dev/null || echo 0)
hwm=$(server_peak_rss_kib)

n=$(counter links.fromSitemaps)
[ "$n" -gt 0 ] && [ "$n" -le 10000 ] && ok "the task wrote $n sitemap URLs (at most 10,000)" ||
    fail "links.fromSitemaps = $n, want 1..10000"
expect_counter sitemaps.truncated -ge 1 "sitemaps.truncated = $(counter sitemaps.truncated)"
expect_counter sitemaps.failed = 0 "no sitemap failed"
[ "$fdmax" -gt 0 ] && [ "$fdmax" -lt $((fd0 + 200)) ] &&
    ok "server descriptors peaked at $fdmax (idle: $fd0)" ||
    fail "server descriptors peaked at $fdmax (idle: $fd0), want < $((fd0 + 200))"
[ $((hwm - rss0)) -lt $((200 * 1024)) ] && ok "peak RSS grew by $(((hwm - rss0) / 1024)) MiB" ||
    fail "peak RSS $((hwm / 1024)) MiB, $(((hwm - rss0) / 1024)) MiB over the idle server"

stop_server
finish
