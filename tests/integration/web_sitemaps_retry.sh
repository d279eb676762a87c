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
. "$(dirname "$0")/web_lib.sh"

SPOOL="$TMP/spool"
py_site "$SPOOL" "$TMP/starts" <<'EOF'
spool, starts = sys.argv[2], [0]
class H(Base):
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
        self.not_found()
EOF

import_config "$TMP/config.json"
TMPDIR="$SPOOL" start_server --config "$TMP/config.json" --data-dir "$TMP/data"

define_web smRetry "$SITE" smretry 'del(.filters) | .followSitemaps = true'

expect_crawl smRetry "crawl SUCCEEDED"
[ "$(cat "$TMP/starts")" = 2 ] && ok "the start task failed once and was retried" ||
    fail "start page requested $(cat "$TMP/starts") times, want 2"
printf '%s\n' "$SITE/" "$SITE/a.html" "$SITE/orphan.html" | LC_ALL=C sort >"$TMP/want"
expect_index "$TMP/want" "the sitemap-only page is indexed after the retry"

stop_server
finish
