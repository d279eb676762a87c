#!/usr/bin/env python3
"""web_site.py: a generated web site for the web crawler tests, served on
127.0.0.1 by Python's threading HTTP server, with an access log of every
request (monotonic start and end times, so the tests can check
politeness) and, in LOG.ports, the client's port of each request (one
per connection).

    web_site.py --port-file F --log L [--pages N] [--crawl-delay S]
                [--slow S] [--mutate-file M]

Site (N pages, default 60):
  /robots.txt          Disallow: /private/ (and Crawl-delay when given)
  /                    links to /p/0.html and /p/1.html
  /p/<i>.html          relative links to the next two pages (cycles back
                       to 0), one link with a fragment, one absolute link;
                       page 3 has <base href="/p/sub/"> and a relative
                       link "b.html" (resolved against the base); page 5
                       links /private/secret.html, /r/to-4 (redirect to
                       /p/4.html), /loop/a (a redirect loop a -> b -> a),
                       /big.html (over 10 MiB), /doc.txt (text with
                       Last-Modified), /archive.zip, /gone.html (404),
                       and has a rel=nofollow link to /p/nofollow.html
  /p/sub/b.html        a page reached only through the base
  /private/secret.html must never be requested
The expected set of indexable URLs is printed with --expected.
--failures: page 6 also links /fail/500 (always 500), /fail/429 (429 with
Retry-After: 1 twice, then a page), /fail/stall (sends nothing for 30 s)
and /fail/reset (closes the connection without an answer).
--robots-stall S: robots.txt answers only after S seconds.
--mutate-file: a JSON file {"change": [paths], "remove": [paths]}; read on
every request, so a test can change the site between two crawls.
--archives: / also links compounds under /arc/ (webExtractor tests):
  /arc/site.zip        application/zip with ETag: a.txt, same.txt,
                       dir/b.txt; changed: a.txt changed, dir/b.txt gone,
                       c.txt new (another ETag)
  /arc/bundle.tar.gz   application/octet-stream (the URL extension marks
                       it) with Last-Modified: readme.txt and inner.zip
                       holding x.txt (a nested compound)
  /arc/plain.zip       application/zip without a validator (the crawler
                       keeps its content): p.txt
  /arc/broken.zip      application/zip that is no zip
  /arc/big.zip         a stored zip of 300 KB of random bytes (over a
                       filters.maxSize of 200000)
--canonical: / also links pages with <link rel="canonical">:
  /c/dup.html?utm=1    the same page as /c/main.html, canonical main.html
  /c/main.html         canonical to itself (an absolute URL)
  /c/index.html, /c/   one page, both canonical to /c/ ("./")
  /c/other.html        canonical on another host and port
                       (http://127.0.0.1:1/x.html: connection refused)
  /c/nf.html?s=1       meta robots nofollow after its canonical link /c/nf.html,
                       links /c/nf-child.html (neither is requested)
  /i/, /i/index.html   the same page, no canonical link: one document, /i/
  /j/index.html        /j/ answers 404 (a bucket without directory
                       indexes): the page stays /j/index.html
  /k/, /k/index.html   two different pages: two documents
  /m/default.htm       only this is linked; /m/ answers the same: /m/
  /c/robots.html       canonical /private/c.html, which robots.txt
                       disallows: the page stays its own document
--sitemaps: robots.txt lists /sitemap_index.xml (relative), /sitemap-a.xml
  and http://127.0.0.1:<port>/sitemap-b.xml.gz; the index lists
  sitemap-a.xml again; sitemap-a.xml has /orphan/1.html, /orphan/2.html
  (linked from no page), /p/0.html, /private/hidden.html (disallowed) and
  /skip/x.html; sitemap-b.xml.gz (gzip) has /orphan/3.html and a URL on
  another host.  /orphan/<n>.html and /skip/x.html are pages.
--robots-redirect N: /robots.txt redirects N times (301, 302, ... through
  /rr/1 ...) to /robots-real.txt (Disallow: /private/ and /p/7.html).
--robots-to URL: /robots.txt redirects (301) to URL.
/robots-shared.txt (always served): Disallow: /p/8.html only.
--retry-date: page 6 also links /fail/429date, answered once with 429 and
  Retry-After as an HTTP date 3 s ahead, then with a page.
--noindex: / also links pages under /ni/ with robots directives:
  /ni/meta.html        <meta name="robots" content="noindex">, links
                       /ni/child1.html
  /ni/none.html        <meta name="robots" content="none">, links
                       /ni/child-none.html (never to be requested)
  /ni/header.html      X-Robots-Tag: noindex, links /ni/child2.html
  /ni/header-nf.html   X-Robots-Tag: nofollow, links /ni/child3.html
                       (never to be requested)
  /ni/other.html       X-Robots-Tag: googlebot: noindex (indexed), links
                       /ni/child4.html
  /ni/doc.txt          text/plain with Last-Modified and
                       X-Robots-Tag: noindex
  /ni/child<n>.html    plain pages
  The mutate file may also hold "noindex": [paths] (a page of /p/ gets
  the meta tag) and "xnoindex": [paths] (any answer gets X-Robots-Tag:
  noindex).
--link URL: / also links URL (another site, say).
--ua-log: each request's User-Agent goes to <log>.ua too (line for line
  with the log), as with --rules, without the rules' pages.
--rules: / also links /fail/429secs (429 with Retry-After: 3, in seconds,
  once, then a page), /r/to-file and /r/to-ftp (302 to file:///etc/passwd
  and to ftp://127.0.0.1/x.html: never to be followed), /r/to-4 (301 to
  /p/4.html) and /attr.html (ISO-8859-1, Last-Modified, no validator
  besides it).  Every request's User-Agent goes to LOG.ua ("path UA").
--tls PEM: serve HTTPS with the certificate and key in PEM (self-signed in
  the tests: a crawler that verifies certificates never gets to send a
  request).
--slow S: every page /p/<i>.html answers after S seconds.
--link-pages PREFIX: page /p/<i>.html also links PREFIX/p/<i>.html (page i
  of another site: parallel tasks then meet that site at once).
--big N: / also links N pages /bigp/<i>.html of 5 MiB each (no validator):
  "bigword<i> kilo" at the start, then ~1M lines "<br>" (no words, and no
  long tag-free run an HTML parser would hold), a link to /bigp/child<i>.html
  at the very end; each sends its first half, then waits until all N are
  that far (a barrier, 30 s at most) before the rest, so all N are in
  flight at once.  And /bigp/text.txt: 5 MiB of text/plain without
  validator, "bigtext lima" in its first line.
The mutate file may also hold "status": {path: code} (that path answers
the code, e.g. 503) and "stall": {path: seconds} (that path answers after
a sleep, e.g. robots.txt).
"""
import argparse
import email.utils
import gzip
import io
import ssl
import json
import os
import sys
import tarfile
import threading
import time
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

BIG = 11 * 1024 * 1024
LASTMOD = "Tue, 14 Nov 2023 22:13:20 GMT"


FAIL_LINKS = ['<a href="/fail/500">500</a>', '<a href="/fail/429">429</a>',
              '<a href="/fail/stall">stall</a>', '<a href="/fail/reset">reset</a>']


def page_links(i, n, failures=False, retry_date=False):
    nxt = [(i + 1) % n, (i + 2) % n]
    links = ['<a href="%d.html">next</a>' % nxt[0],
             '<a href="%d.html#part">frag</a>' % nxt[1],
             '<a href="/p/%d.html">abs</a>' % nxt[0],
             '<a href="../p/%d.html">dots</a>' % nxt[1]]
    if i == 5:
        links += ['<a href="/private/secret.html">secret</a>',
                  '<a href="/r/to-4">redirect</a>',
                  '<a href="/loop/a">loop</a>',
                  '<a href="/big.html">big</a>',
                  '<a href="/doc.txt">doc</a>',
                  '<a href="/archive.zip">zip</a>',
                  '<a href="/gone.html">gone</a>',
                  '<a rel="nofollow" href="/p/nofollow.html">nf</a>']
    if i == 6 and failures:
        links += FAIL_LINKS
    if i == 6 and retry_date:
        links += ['<a href="/fail/429date">429 date</a>']
    return links


ARC_LINKS = ['<a href="/arc/site.zip">site</a>', '<a href="/arc/bundle.tar.gz">bundle</a>',
             '<a href="/arc/plain.zip">plain</a>', '<a href="/arc/broken.zip">broken</a>',
             '<a href="/arc/big.zip">big</a>']


CANON_LINKS = ['<a href="/c/dup.html?utm=1">dup</a>', '<a href="/c/main.html">main</a>',
               '<a href="/c/index.html">index</a>', '<a href="/c/">dir</a>',
               '<a href="/c/other.html">other</a>', '<a href="/c/robots.html">robots</a>',
               '<a href="/c/nf.html?s=1">nofollow</a>',
               '<a href="/i/">i</a>', '<a href="/i/index.html">i index</a>',
               '<a href="/j/index.html">j index</a>', '<a href="/k/">k</a>',
               '<a href="/k/index.html">k index</a>', '<a href="/m/default.htm">m</a>']


NI_LINKS = ['<a href="/ni/meta.html">meta</a>', '<a href="/ni/none.html">none</a>',
            '<a href="/ni/header.html">header</a>', '<a href="/ni/header-nf.html">nf</a>',
            '<a href="/ni/other.html">other</a>', '<a href="/ni/doc.txt">doc</a>']


def expected(n, archives=False, changed=False, sitemaps=False, noindex=False, canonical=False):
    urls = {"/", "/p/sub/b.html", "/doc.txt", "/archive.zip", "/archive.zip!/inner.txt"}
    urls |= {"/p/%d.html" % i for i in range(n)}
    if canonical:  # the pages under their canonical URL only
        urls |= {"/c/main.html", "/c/", "/c/other.html", "/c/robots.html", "/c/nf.html"}
        urls |= {"/i/", "/j/index.html", "/k/", "/k/index.html", "/m/"}
    if noindex:
        urls |= {"/ni/child1.html", "/ni/child2.html", "/ni/child4.html", "/ni/header-nf.html",
                 "/ni/other.html"}
    if sitemaps:
        urls |= {"/orphan/1.html", "/orphan/2.html", "/orphan/3.html"}
    if archives:
        urls |= {"/arc/plain.zip", "/arc/plain.zip!/p.txt", "/arc/broken.zip",
                 "/arc/site.zip", "/arc/site.zip!/a.txt", "/arc/site.zip!/same.txt"}
        if changed:
            urls |= {"/arc/site.zip!/c.txt"}
        else:
            urls |= {"/arc/site.zip!/dir/b.txt", "/arc/bundle.tar.gz",
                     "/arc/bundle.tar.gz!/readme.txt", "/arc/bundle.tar.gz!/inner.zip",
                     "/arc/bundle.tar.gz!/inner.zip!/x.txt"}
    return sorted(urls)


def make_zip(entries, stored=False):
    """entries: [(name, text or bytes, (y, m, d, H, M, S))]"""
    bio = io.BytesIO()
    with zipfile.ZipFile(bio, "w", zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED) as z:
        for name, data, when in entries:
            z.writestr(zipfile.ZipInfo(name, when), data)
    return bio.getvalue()


def make_archives():
    t1, t2 = (2023, 11, 14, 10, 0, 0), (2023, 11, 15, 12, 30, 0)
    inner = make_zip([("x.txt", "nested xray words", t1)])
    bio = io.BytesIO()
    with tarfile.open(fileobj=bio, mode="w:gz") as tar:
        for name, data in (("readme.txt", b"bundle readme yankee"), ("inner.zip", inner)):
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(data), 1700000000
            tar.addfile(info, io.BytesIO(data))
    return {
        "site": make_zip([("a.txt", "alpha zip one", t1), ("same.txt", "steady zulu", t1),
                          ("dir/b.txt", "bravo zip two", t1)]),
        "site2": make_zip([("a.txt", "alpha zip changed", t2), ("same.txt", "steady zulu", t1),
                           ("c.txt", "charlie added", t2)]),
        "bundle": bio.getvalue(),
        "plain": make_zip([("p.txt", "plain papa words", t1)]),
        "broken": b"PK\x03\x04" + b"this is not a zip archive at all" * 10,
        "big": make_zip([("noise.bin", os.urandom(300 * 1024), t1)], stored=True),
    }


class Site:
    def __init__(self, args):
        self.n = args.pages
        self.crawl_delay = args.crawl_delay
        self.mutate = args.mutate_file
        self.failures = args.failures
        self.robots_stall = args.robots_stall
        self.archives = make_archives() if args.archives else None
        self.sitemaps = args.sitemaps
        self.robots_redirect = args.robots_redirect
        self.robots_to = args.robots_to
        self.retry_date = args.retry_date
        self.noindex = args.noindex
        self.canonical = args.canonical
        self.links = args.link
        self.link_pages = args.link_pages
        self.rules = args.rules
        self.slow = args.slow
        self.ua = open(
            args.log + ".ua" if args.rules or args.ua_log else "/dev/null", "a", buffering=1
        )
        self.big = args.big
        self.barrier = threading.Barrier(args.big) if args.big else None
        self.hits = {}
        self.log = open(args.log, "a", buffering=1)
        self.ports = open(
            args.log + ".ports" if args.log != "/dev/null" else "/dev/null",
            "a",
            buffering=1,
        )
        self.lock = threading.Lock()
        self.zip = self._zip()

    def _zip(self):
        bio = io.BytesIO()
        with zipfile.ZipFile(bio, "w") as z:
            z.writestr("inner.txt", "zipped words kilo")
        return bio.getvalue()

    def changes(self):
        if not self.mutate or not os.path.exists(self.mutate):
            return {"change": [], "remove": []}
        with open(self.mutate) as f:
            return json.load(f)

    def record(self, path, t0, t1, status, port, ua):
        with self.lock:
            self.log.write("%.6f %.6f %d %s\n" % (t0, t1, status, path))
            self.ports.write("%d %s\n" % (port, path))
            self.ua.write("%s %s\n" % (path, ua))


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def send(self, status, body, ctype="text/html; charset=utf-8", headers=()):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        if self.path.split("?")[0] in self.server.site.changes().get("xnoindex", []):
            self.send_header("X-Robots-Tag", "noindex")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        return status

    def base(self):
        return "http://127.0.0.1:%d" % self.server.server_address[1]

    def sitemap(self, path):
        b = self.base()
        urlset = ('<?xml version="1.0" encoding="UTF-8"?>\n'
                  '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">%s</urlset>')
        if path == "/sitemap_index.xml":
            body = ('<?xml version="1.0" encoding="UTF-8"?>\n'
                    '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                    '<sitemap><loc>%s/sitemap-a.xml</loc></sitemap></sitemapindex>' % b)
            return self.send(200, body.encode(), "application/xml")
        if path == "/sitemap-a.xml":
            locs = ["/orphan/1.html", "/orphan/2.html", "/p/0.html", "/private/hidden.html",
                    "/skip/x.html"]
            body = urlset % "".join("<url><loc>%s%s</loc><lastmod>2023-11-14</lastmod></url>"
                                    % (b, u) for u in locs)
            return self.send(200, body.encode(), "application/xml")
        if path == "/sitemap-b.xml.gz":
            body = urlset % ("<url><loc>%s/orphan/3.html</loc></url>"
                             "<url><loc>http://elsewhere.invalid/x.html</loc></url>" % b)
            return self.send(200, gzip.compress(body.encode()), "application/gzip")
        if path.startswith("/orphan/") and path[8:-5].isdigit() and path.endswith(".html"):
            return self.send(200, ("<html><head><title>Orphan</title></head><body>orphan "
                                   "page %s words oscar</body></html>" % path[8:-5]).encode())
        if path == "/skip/x.html":
            return self.send(200, b"<html><body>excluded by urlPatterns</body></html>")
        return self.send(404, b"not found")

    def index_page(self, path):
        pages = {  # no canonical links: the crawler compares what both answer
            "/i/": "served index tango words",
            "/i/index.html": "served index tango words",
            "/j/index.html": "bucket index quebec words",  # /j/ is 404
            "/k/": "listing romeo words",
            "/k/index.html": "another index romeo words",
            "/m/": "default document sierra words",
            "/m/default.htm": "default document sierra words",
        }
        if path not in pages:
            return self.send(404, b"not found")
        return self.send(200, ('<html><head><title>Index</title></head><body><p>%s</p>'
                               '</body></html>' % pages[path]).encode())

    def canonical_page(self, path):
        pages = {  # path: (canonical href, words)
            "/c/dup.html": (self.base() + "/c/main.html", "canonical india words"),
            "/c/main.html": (self.base() + "/c/main.html", "canonical india words"),
            "/c/index.html": ("./", "directory juliett words"),
            "/c/": ("./", "directory juliett words"),
            "/c/other.html": ("http://127.0.0.1:1/x.html", "elsewhere kilo words"),
            "/c/robots.html": ("/private/c.html", "disallowed lima words"),
            "/c/nf.html": ("/c/nf.html", "unfollowed mike words"),
            "/c/nf.html?s=1": ("/c/nf.html", "unfollowed mike words"),
        }
        if path not in pages:
            return self.send(404, b"not found")
        href, words = pages[path]
        head = ""
        if path.startswith("/c/nf.html"):  # the canonical link before the meta
            head = '<meta name="robots" content="nofollow">'
            words += ' <a href="/c/nf-child.html">child</a>'
        body = ('<html><head><title>Canonical</title><link rel="canonical" href="%s">%s'
                '</head><body><p>%s</p></body></html>' % (href, head, words))
        return self.send(200, body.encode())

    def noindex_page(self, path):
        pages = {
            "/ni/meta.html": ('<meta name="robots" content="noindex">', "/ni/child1.html", []),
            "/ni/none.html": ('<meta name="robots" content="none">', "/ni/child-none.html", []),
            "/ni/header.html": ("", "/ni/child2.html", [("X-Robots-Tag", "noindex")]),
            "/ni/header-nf.html": ("", "/ni/child3.html", [("X-Robots-Tag", "nofollow")]),
            "/ni/other.html": ("", "/ni/child4.html", [("X-Robots-Tag", "googlebot: noindex")]),
        }
        if path in pages:
            meta, link, hdr = pages[path]
            body = ('<html><head><title>Robots</title>%s</head><body>robots words echo '
                    '<a href="%s">child</a></body></html>' % (meta, link))
            return self.send(200, body.encode(), headers=hdr)
        if path == "/ni/doc.txt":
            return self.send(200, b"hidden document foxtrot\n", "text/plain",
                             [("Last-Modified", LASTMOD), ("X-Robots-Tag", "noindex")])
        if path.startswith("/ni/child") and path.endswith(".html"):
            return self.send(200, ("<html><body>child %s golf</body></html>" % path).encode())
        return self.send(404, b"not found")

    def big_page(self, path):
        size = 5 * 1024 * 1024
        if path == "/bigp/text.txt":
            line = b"more plain filler text in a big document\n"
            body = b"bigtext lima\n" + line * (size // len(line))
            return self.send(200, body, "text/plain")
        if path.startswith("/bigp/child"):
            return self.send(200, ("<html><body>child of a big page %s mike</body></html>"
                                   % path).encode())
        i = path[6:-5]
        if not (i.isdigit() and path.endswith(".html")):
            return self.send(404, b"not found")
        head = ("<html><head><title>Big %s</title></head><body><p>bigword%s kilo</p>"
                % (i, i)).encode()
        tail = ('<a href="/bigp/child%s.html">child</a></body></html>' % i).encode()
        body = head + b"<br>\n" * ((size - len(head) - len(tail)) // 5) + tail
        half = len(body) // 2
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body[:half])
        self.wfile.flush()
        try:
            self.server.site.barrier.wait(timeout=30)
        except threading.BrokenBarrierError:
            pass
        self.wfile.write(body[half:])
        return 200

    def archive(self, name, tag):
        arc = self.server.site.archives
        if name == "site.zip":
            return self.send(200, arc["site2" if tag else "site"], "application/zip",
                             [("ETag", '"site-2"' if tag else '"site-1"')])
        if name == "bundle.tar.gz":
            return self.send(200, arc["bundle"], "application/octet-stream",
                             [("Last-Modified", LASTMOD)])
        if name in ("plain.zip", "broken.zip", "big.zip"):
            hdr = [] if name == "plain.zip" else [("ETag", '"%s"' % name)]
            return self.send(200, arc[name[:-4]], "application/zip", hdr)
        return self.send(404, b"not found")

    def route(self):
        site = self.server.site
        path = self.path.split("?")[0]
        ch = site.changes()
        if path in ch.get("remove", []):
            return self.send(404, b"gone")
        if path in ch.get("status", {}):
            return self.send(ch["status"][path], b"unavailable")
        if path in ch.get("stall", {}):
            time.sleep(ch["stall"][path])
        tag = " changed" if path in ch.get("change", []) else ""
        if path == "/robots.txt" and site.robots_stall:
            time.sleep(site.robots_stall)
        if site.robots_redirect and (path == "/robots.txt" or path.startswith("/rr/")):
            i = 0 if path == "/robots.txt" else int(path[4:])
            nxt = "/rr/%d" % (i + 1) if i + 1 < site.robots_redirect else "/robots-real.txt"
            return self.send(302 if i % 2 else 301, b"", headers=[("Location", nxt)])
        if path == "/robots-real.txt":
            return self.send(200, b"User-agent: *\nDisallow: /private/\nDisallow: /p/7.html\n",
                             "text/plain")
        if path == "/robots.txt" and site.robots_to:
            return self.send(301, b"", headers=[("Location", site.robots_to)])
        if path == "/robots-shared.txt":
            return self.send(200, b"User-agent: *\nDisallow: /p/8.html\n", "text/plain")
        if path == "/fail/429date":
            with site.lock:
                site.hits[path] = site.hits.get(path, 0) + 1
                n = site.hits[path]
            if n == 1:
                when = email.utils.formatdate(time.time() + 3, usegmt=True)
                return self.send(429, b"slow down", headers=[("Retry-After", when)])
            return self.send(200, b"<html><head><title>Dated</title></head><body>dated mike</body></html>")
        if path == "/fail/429secs" and site.rules:
            with site.lock:
                site.hits[path] = site.hits.get(path, 0) + 1
                n = site.hits[path]
            if n == 1:
                return self.send(429, b"slow down", headers=[("Retry-After", "3")])
            return self.send(200, b"<html><head><title>Waited</title></head><body>waited oscar</body></html>")
        if path == "/r/to-file" and site.rules:
            return self.send(302, b"", headers=[("Location", "file:///etc/passwd")])
        if path == "/r/to-ftp" and site.rules:
            return self.send(302, b"", headers=[("Location", "ftp://127.0.0.1/x.html")])
        if path == "/attr.html" and site.rules:
            return self.send(200, "<html><head><title>Attr</title></head><body>caf\u00e9 papa</body></html>"
                             .encode("iso-8859-1"), "text/html; charset=iso-8859-1",
                             [("Last-Modified", LASTMOD)])
        if path == "/fail/500":
            return self.send(500, b"server error")
        if path == "/fail/429":
            with site.lock:
                site.hits[path] = site.hits.get(path, 0) + 1
                n = site.hits[path]
            if n <= 2:
                return self.send(429, b"slow down", headers=[("Retry-After", "1")])
            return self.send(200, b"<html><head><title>Patient</title></head><body>patience lima</body></html>")
        if path == "/fail/stall":
            time.sleep(30)
            return self.send(200, b"too late")
        if path == "/fail/reset":
            self.close_connection = True
            self.connection.shutdown(2)
            return 0
        if path == "/robots.txt":
            body = "User-agent: *\nDisallow: /private/\n"
            if site.crawl_delay:
                body += "Crawl-delay: %s\n" % site.crawl_delay
            if site.sitemaps:
                body += ("Sitemap: /sitemap_index.xml\nSitemap: %s/sitemap-a.xml\n"
                         "Sitemap: %s/sitemap-b.xml.gz\n" % (self.base(), self.base()))
            return self.send(200, body.encode(), "text/plain")
        if site.sitemaps and (path.startswith("/sitemap") or path.startswith("/orphan/")
                              or path == "/skip/x.html"):
            return self.sitemap(path)
        if path == "/":
            extra = (ARC_LINKS if site.archives else []) + (NI_LINKS if site.noindex else [])
            extra += CANON_LINKS if site.canonical else []
            extra += ['<a href="%s">elsewhere</a>' % u for u in site.links]
            if site.rules:
                extra += ['<a href="/%s">rule</a>' % u for u in
                          ("fail/429secs", "r/to-file", "r/to-ftp", "r/to-4", "attr.html")]
            if site.big:
                extra += ['<a href="/bigp/%d.html">big</a>' % i for i in range(site.big)]
                extra += ['<a href="/bigp/text.txt">big text</a>']
            return self.send(200, ('<html><head><title>Home</title></head><body>'
                                   '<a href="/p/0.html">0</a> <a href="p/1.html">1</a> %s'
                                   '<p>home page words alpha%s</p></body></html>'
                                   % (" ".join(extra), tag)).encode())
        if path.startswith("/ni/") and site.noindex:
            return self.noindex_page(path)
        if path.startswith("/c/") and site.canonical:
            return self.canonical_page(path)
        if path[:3] in ("/i/", "/j/", "/k/", "/m/") and site.canonical:
            return self.index_page(path)
        if path.startswith("/bigp/") and site.big:
            return self.big_page(path)
        if path.startswith("/arc/") and site.archives:
            return self.archive(path[5:], tag)
        if path.startswith("/p/") and path.endswith(".html") and path[3:-5].isdigit():
            i = int(path[3:-5])
            if site.slow:
                time.sleep(site.slow)
            if i >= site.n:
                return self.send(404, b"no such page")
            head = '<base href="/p/sub/">' if i == 3 else ""
            if path in ch.get("noindex", []):
                head += '<meta name="robots" content="noindex">'
            extra = '<a href="b.html">based</a>' if i == 3 else ""
            if site.link_pages:
                extra += ' <a href="%s/p/%d.html">other</a>' % (site.link_pages, i)
            body = ('<html><head><title>Page %d</title>%s</head><body><p>page %d words '
                    'bravo%s</p>%s %s</body></html>'
                    % (i, head, i, tag, " ".join(page_links(i, site.n, site.failures, site.retry_date)), extra))
            return self.send(200, body.encode())
        if path == "/p/sub/b.html":
            return self.send(200, b"<html><head><title>Based</title></head><body>based charlie</body></html>")
        if path == "/r/to-4":
            return self.send(301, b"", headers=[("Location", "/p/4.html")])
        if path == "/loop/a":
            return self.send(302, b"", headers=[("Location", "/loop/b")])
        if path == "/loop/b":
            return self.send(302, b"", headers=[("Location", "/loop/a")])
        if path == "/big.html":
            return self.send(200, b"<html><body>" + b"x" * BIG + b"</body></html>")
        if path == "/doc.txt":
            return self.send(200, ("plain document delta%s\n" % tag).encode(), "text/plain",
                             [("Last-Modified", "Wed, 15 Nov 2023 10:00:00 GMT" if tag else LASTMOD)])
        if path == "/archive.zip":
            return self.send(200, site.zip, "application/zip", [("ETag", '"zip-1"')])
        if path == "/p/nofollow.html":
            return self.send(200, b"<html><body>should not be crawled</body></html>")
        return self.send(404, b"not found")

    def do_GET(self):
        t0 = time.monotonic()
        status = 500
        try:
            status = self.route()
        finally:
            self.server.site.record(
                self.path, t0, time.monotonic(), status, self.client_address[1],
                self.headers.get("User-Agent", "")
            )

    do_HEAD = do_GET


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # a crawler that cuts a transfer short resets the connection


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file")
    ap.add_argument("--log", default="/dev/null")
    ap.add_argument("--pages", type=int, default=60)
    ap.add_argument("--crawl-delay", default="")
    ap.add_argument("--mutate-file", default="")
    ap.add_argument("--failures", action="store_true")
    ap.add_argument("--robots-stall", type=float, default=0)
    ap.add_argument("--archives", action="store_true")
    ap.add_argument("--sitemaps", action="store_true")
    ap.add_argument("--robots-redirect", type=int, default=0)
    ap.add_argument("--robots-to", default="")
    ap.add_argument("--retry-date", action="store_true")
    ap.add_argument("--noindex", action="store_true")
    ap.add_argument("--canonical", action="store_true")
    ap.add_argument("--link", action="append", default=[])
    ap.add_argument("--link-pages", default="")
    ap.add_argument("--rules", action="store_true")
    ap.add_argument("--ua-log", action="store_true")
    ap.add_argument("--tls", default="")
    ap.add_argument("--slow", type=float, default=0)
    ap.add_argument("--big", type=int, default=0)
    ap.add_argument("--changed", action="store_true", help="with --expected: after the changes")
    ap.add_argument("--expected", action="store_true")
    args = ap.parse_args()
    if args.expected:
        print("\n".join(expected(args.pages, args.archives, args.changed, args.sitemaps,
                                 args.noindex, args.canonical)))
        return
    srv = Server(("127.0.0.1", 0), Handler)
    srv.site = Site(args)
    if args.tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.tls)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(args.port_file + ".tmp", args.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
