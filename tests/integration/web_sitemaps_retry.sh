#!/bin/bash
# webCrawler followSitemaps when the task that fetched robots.txt is
# retried in the same process (review of 497da89): the retry finds
# robots.txt in the process's cache and must still queue its sitemaps,
# or the pages only a sitemap names are never crawled (and with `full`
# an indexed copy would be deleted).
# The first attempt fails on purpose: the server's TMPDIR is missing, so
# the start page (over 256 KiB, spooled to a temp file) cannot be kept
# and the task ends RECOVERABLE; the site creates the directory when the
# start page is asked for again, so the retry can keep it.  Asserted: the
# start page was requested twice (a retry happened), the run SUCCEEDED
# and the sitemap-only page is indexed.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"

SPOOL="$TMP/spool"
cat >"$TMP/site.py" <<'EOF'
import http.server, os, socketserver, sys
spool, starts = sys.argv[2], [0]
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a):
        pass
    def send(self, ctype, body):
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_GET(self):
        p = self.path
        if p == "/robots.txt":
            return self.send("text/plain", b"User-agent: *\nAllow: /\nSitemap: /sm.xml\n")
        if p == "/":
            starts[0] += 1
            open(sys.argv[3], "w").write(str(starts[0]))
            if starts[0] > 1:
                os.makedirs(spool, exist_ok=True)
            pad = "<p>" + "x" * 1000 + "</p>\n"
            return self.send("text/html", ("<html><body><a href='/a.html'>a</a>"
                                           + pad * 300 + "</body></html>").encode())
        if p == "/sm.xml":
            return self.send("application/xml", b'<?xml version="1.0"?><urlset '
                             b'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                             b'<url><loc>/orphan.html</loc></url></urlset>')
        if p in ("/a.html", "/orphan.html"):
            return self.send("text/html", ("<html><body>page %s</body></html>" % p).encode())
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()
class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    def handle_error(self, *a):
        pass
s = S(("127.0.0.1", 0), H)
open(sys.argv[1], "w").write(str(s.server_address[1]))
s.serve_forever()
EOF
python3 "$TMP/site.py" "$TMP/site.port" "$SPOOL" "$TMP/starts" &
SITE_PID=$!
trap 'kill $SITE_PID 2>/dev/null; cleanup' EXIT
for _ in $(seq 1 100); do [ -s "$TMP/site.port" ] && break; sleep 0.05; done
SITE="http://127.0.0.1:$(cat "$TMP/site.port")"

import_config "$TMP/config.json"
TMPDIR="$SPOOL" start_server --config "$TMP/config.json" --data-dir "$TMP/data"

params=$(jq -cn --arg url "$SITE/" \
    '{dataSource: "smretry", startUrl: $url, jobToPushTo: "indexUpdate",
      followSitemaps: true, politeness: {delayMs: 0, maxConnectionsPerHost: 4}}')
req POST /smila/jobmanager/jobs/ -H 'Content-Type: application/json' \
    -d "{\"name\": \"smRetry\", \"workflow\": \"webCrawling\", \"parameters\": $params}"
[ "$STATUS" = 200 ] || fail "define: $STATUS $(cat "$BODY")"

if crawl smRetry; then ok "crawl SUCCEEDED"; else fail "crawl: $(cat "$TMP/crawl.err")"; fi
[ "$(cat "$TMP/starts")" = 2 ] && ok "the start task failed once and was retried" ||
    fail "start page requested $(cat "$TMP/starts") times, want 2"
snapshot "$TMP/s1"
ids "$TMP/s1" | LC_ALL=C sort >"$TMP/got"
printf '%s\n' "$SITE/" "$SITE/a.html" "$SITE/orphan.html" | LC_ALL=C sort >"$TMP/want"
if diff "$TMP/want" "$TMP/got" >"$TMP/diff"; then
    ok "the sitemap-only page is indexed after the retry"
else
    fail "index ids differ: $(cat "$TMP/diff")"
fi

stop_server
finish
