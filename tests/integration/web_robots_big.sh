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
. "$(dirname "$0")/web_lib.sh"

py_site "$TMP/access.log" <<'EOF'
log = open(sys.argv[2], "a", buffering=1)
robots = b"User-agent: *\nDisallow: /private/\n" + (b"# " + b"x" * 76 + b"\n") * 7680
class H(Base):
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
        self.not_found()
EOF

start_web_server

define_web robotsBig "$SITE" robotsbig 'del(.filters)'

expect_crawl robotsBig "crawl SUCCEEDED"
wait_indexed
printf '%s\n' "$SITE/" "$SITE/a.html" | LC_ALL=C sort >"$TMP/want"
expect_index "$TMP/want" "the pages outside /private/ are indexed, /private/b.html is not"
grep -q "^GET /private/" "$TMP/access.log" && fail "/private/ was requested" ||
    ok "/private/ was not requested"
expect_counter robots.fetched = 1 "robots.txt counted fetched"
expect_counter robots.unreachable = 0 "the host is not taken as unreachable"
expect_counter links.disallowedByRobots = 1 "one link disallowed by robots.txt"

stop_server
finish
