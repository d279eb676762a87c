#!/bin/bash
# webCrawler, a robots.txt over ROBOTS_MAX (512 KiB) (item 7 of the
# webCrawler review): the first bytes are kept and parsed (the parser
# reads 500 KiB, docs/web.md), the rest is not read; the host is not
# taken as unreachable (disallow all).  A 600 KiB robots.txt whose first
# lines disallow /private/: the pages outside are crawled, /private/ is
# not requested; robots.fetched, no robots.unreachable.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"

cat >"$TMP/site.py" <<'EOF2'
import http.server, socketserver, sys
log = open(sys.argv[2], "a", buffering=1)
robots = b"User-agent: *\nDisallow: /private/\n" + (b"# " + b"x" * 76 + b"\n") * 7680
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
        log.write("GET %s\n" % p)
        if p == "/robots.txt":
            return self.send("text/plain", robots)
        if p == "/":
            return self.send("text/html", b"<html><body><a href='/a.html'>a</a>"
                             b"<a href='/private/b.html'>b</a></body></html>")
        if p in ("/a.html", "/private/b.html"):
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
EOF2
python3 "$TMP/site.py" "$TMP/site.port" "$TMP/access.log" &
SITE_PID=$!
trap 'kill $SITE_PID 2>/dev/null; cleanup' EXIT
for _ in $(seq 1 100); do [ -s "$TMP/site.port" ] && break; sleep 0.05; done
SITE="http://127.0.0.1:$(cat "$TMP/site.port")"

import_config "$TMP/config.json"
start_server --config "$TMP/config.json" --data-dir "$TMP/data"

params=$(jq -cn --arg url "$SITE/" \
    '{dataSource: "robotsbig", startUrl: $url, jobToPushTo: "indexUpdate",
      politeness: {delayMs: 0, maxConnectionsPerHost: 4}}')
req POST /smila/jobmanager/jobs/ -H 'Content-Type: application/json' \
    -d "{\"name\": \"robotsBig\", \"workflow\": \"webCrawling\", \"parameters\": $params}"
[ "$STATUS" = 200 ] || fail "define: $STATUS $(cat "$BODY")"

if crawl robotsBig; then ok "crawl SUCCEEDED"; else fail "crawl: $(cat "$TMP/crawl.err")"; fi
wait_indexed
snapshot "$TMP/s1"
ids "$TMP/s1" | LC_ALL=C sort >"$TMP/got"
printf '%s\n' "$SITE/" "$SITE/a.html" | LC_ALL=C sort >"$TMP/want"
if diff "$TMP/want" "$TMP/got" >"$TMP/diff"; then
    ok "the pages outside /private/ are indexed, /private/b.html is not"
else
    fail "index ids differ: $(cat "$TMP/diff")"
fi
grep -q "^GET /private/" "$TMP/access.log" && fail "/private/ was requested" ||
    ok "/private/ was not requested"
[ "$(counter robots.fetched)" = 1 ] && ok "robots.txt counted fetched" ||
    fail "robots.fetched = $(counter robots.fetched)"
[ "$(counter robots.unreachable)" = 0 ] && ok "the host is not taken as unreachable" ||
    fail "robots.unreachable = $(counter robots.unreachable)"
[ "$(counter links.disallowedByRobots)" = 1 ] && ok "one link disallowed by robots.txt" ||
    fail "links.disallowedByRobots = $(counter links.disallowedByRobots)"

stop_server
finish
