#!/usr/bin/env python3
"""web_site_large.py: a generated site of a few thousand interlinked pages
on two hosts (two ports of 127.0.0.1, one process), for the web crawler
tests (issue 6).  Deterministic for a given --seed and --pages.

    web_site_large.py --port-file F --log-a LA --log-b LB --plan P
                      [--pages 3500] [--seed 6] [--max-depth 12]
                      [--max-size 262144] [--max-redirects 5]

F gets "<port A> <port B>" once both listen.  Every request is logged as
"<start> <end> <status> <path>" (monotonic seconds) to LA or LB.

Host A, the main site:
  /robots.txt        Disallow: /private/
  /                  links to the hubs /h/<i>.html (layer 1), the deep
                     chain /deep/0.html, host B's / and an external URL
                     (outside urlPatterns); fewer links than linksPerBulk,
                     so all of layer 1 is visited in one batch
  /s/<k>/<j>.html    layers 2..L: every page has 1-3 parents in layer k-1
                     and links its children in layer k+1 written in many
                     forms (relative, ../, ./, absolute path, absolute
                     URL, upper-case scheme, fragments, an empty query,
                     iframe, area); some pages have <base href> pointing
                     at the next layer's folder; cycles through links back
                     to / and to the hubs; some children are reached only
                     through a redirect (/r/, two hops /r2/ -> /r/); some
                     pages carry <meta name="robots" content="nofollow">
                     (a link only they have, /metanf/, is never
                     requested); links to /private/ (robots.txt), rel=
                     nofollow links (/nofollow/), <img>, <script> and
                     <link rel=stylesheet> (not links: /never/), text
                     resources with Last-Modified (/files/*.txt),
                     without a validator (/files/*.csv), PNGs with an
                     ETag (/img/), pages over --max-size (/big/), 404s
                     (/missing/), a redirect loop (/loop/a <-> /loop/b), a
                     redirect chain longer than --max-redirects (/chain/)
                     and /archive.zip (ETag; inner.txt, dir/inner.html).
  /deep/<i>.html     a chain hanging from / (depth i+1), 2*max-depth long.
  All links into layer k come from layer k-1 or go back to / and the hubs
  (visited before any deeper page is fetched), so a page's crawl depth is
  its layer whatever the order the crawler works in.
Host B: robots.txt Disallow: /private/ and Crawl-delay: 0.1; / links
  /b/<i>.html in three layers (linked from A's /, so depths 1..4), each
  links back to A's / and some link B's /private/.

The plan P (JSON) is what a crawl with maxCrawlDepth --max-depth,
filters.maxSize --max-size and maxRedirects --max-redirects, urlPatterns
both hosts, must do, computed by a breadth-first walk over the model
(links resolved with urllib, the crawler's URL normal form):
  expected   URLs indexed exactly once (pages and resources)
  requests   {"A": {path: n}, "B": {path: n}}: every request the crawl
             makes (n = 2 for resources with a validator: headers by the
             crawler, content by the webFetcher), and nothing else
  depth      {url: depth} of every URL the walk reached
  never      {"A": [paths], "B": [paths]} that exist but must never be
             requested (robots.txt, nofollow, not links, too deep)
  zip        the URL of the archive, zipElements the ids of its entries
             (<url>!/<path>) for a workflow that extracts compounds
"""
import argparse
import io
import json
import os
import random
import sys
import threading
import time
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urljoin, urlsplit, urlunsplit

LASTMOD = "Tue, 14 Nov 2023 22:13:20 GMT"
HUBS = 8


def norm(url):
    """The crawler's normal form for the URLs this site writes."""
    s = urlsplit(url)
    path = s.path or "/"
    return urlunsplit((s.scheme.lower(), s.netloc.lower(), path, s.query, ""))


class Node:
    """One URL of the model: kind html|big|res|redirect|missing."""

    def __init__(self, kind, **kw):
        self.kind = kind
        self.links = []      # (href, rel or "", tag) for html
        self.base = None     # <base href> for html
        self.nofollow = False  # <meta name="robots" content="nofollow">
        self.title = ""
        self.words = ""
        self.ctype = "text/html; charset=utf-8"
        self.body = b""
        self.headers = []
        self.location = None
        self.__dict__.update(kw)


class Model:
    def __init__(self, a, b, pages, seed, max_size):
        self.a, self.b = a, b          # "http://127.0.0.1:port"
        self.nodes = {}                # full URL -> Node
        self.rng = random.Random(seed)
        self.max_size = max_size
        self.pages = pages
        self.zip = self._zip()
        self._build()

    def _zip(self):
        bio = io.BytesIO()
        with zipfile.ZipFile(bio, "w") as z:
            z.writestr("inner.txt", "zipped words kilo")
            z.writestr("dir/inner.html", "<html><body>zipped page lima</body></html>")
        return bio.getvalue()

    def add(self, url, node):
        self.nodes[url] = node
        return node

    def html(self, url, title):
        return self.add(url, Node("html", title=title, words=title.lower()))

    def layer_sizes(self):
        n = self.pages - HUBS
        sizes = [1, HUBS, max(n // 100, 4), max(n // 25, 8)]
        rest = n - sizes[2] - sizes[3]
        per = rest // 11
        sizes += [per] * 10 + [rest - 10 * per]
        return sizes                   # index = layer, 0..14

    def page_url(self, k, j):
        if k == 0:
            return self.a + "/"
        if k == 1:
            return "%s/h/%d.html" % (self.a, j)
        return "%s/s/%d/%d.html" % (self.a, k, j)

    def child_href(self, k, j, ck, cj, style):
        """A link from page (k, j) to page (ck, cj) in one of many forms."""
        if ck == 1:
            forms = ["/h/%d.html" % cj, "h/%d.html" % cj, "./h/%d.html#x" % cj]
            return forms[style % len(forms)]
        path = "/s/%d/%d.html" % (ck, cj)
        up = "../s/" if k == 1 else "../"      # from /h/ or /s/<k>/
        forms = [
            "%s%d/%d.html" % (up, ck, cj),
            path,
            "%s%s" % (self.a, path),
            "HTTP://%s%s" % (self.a[len("http://"):], path),
            "%s%d/./%d.html" % (up, ck, cj),
            "%s%d/zz/../%d.html#sec" % (up, ck, cj),
            "%s#top" % path,
            "%s?" % path,
        ]
        return forms[style % len(forms)]

    def _build(self):
        rng = self.rng
        a, b = self.a, self.b
        sizes = self.layer_sizes()
        layers = len(sizes)
        children = {}                  # (k, j) -> [(ck, cj, via)]
        for k in range(1, layers):
            for j in range(sizes[k]):
                parents = {j * sizes[k - 1] // sizes[k]}
                via = "link"
                if k >= 3 and j % 53 == 11:
                    via = "redirect"   # reached only through /r/
                elif k >= 3 and j % 59 == 13:
                    via = "redirect2"  # /r2/ -> /r/ -> page
                else:
                    for _ in range(rng.randint(0, 2)):
                        parents.add(rng.randrange(sizes[k - 1]))
                for p in sorted(parents):
                    children.setdefault((k - 1, p), []).append((k, j, via))
        for k in range(layers):
            for j in range(sizes[k]):
                self._page(k, j, children.get((k, j), []))
        # the deep chain, host B, the fixed URLs
        self.deep = 2 * 12
        for i in range(self.deep + 1):
            n = self.html("%s/deep/%d.html" % (a, i), "Deep %d" % i)
            n.links = [("%d.html" % (i + 1), "", "a"), ("/", "", "a"),
                       ("#top", "", "a")]
        self.add(b + "/robots.txt", Node("res", ctype="text/plain", body=(
            b"User-agent: *\nDisallow: /private/\nCrawl-delay: 0.1\n")))
        self.add(a + "/robots.txt", Node("res", ctype="text/plain", body=(
            b"User-agent: *\nDisallow: /private/\n")))
        n = self.html(b + "/", "Bee home")
        n.links = [("/b/%d.html" % i, "", "a") for i in range(4)]
        for i in range(4 + 8 + 8):
            n = self.html("%s/b/%d.html" % (b, i), "Bee %d" % i)
            kids = [4 + 2 * i, 5 + 2 * i] if i < 4 else [12 + (i - 4)] if i < 12 else []
            n.links = [("%d.html" % c, "", "a") for c in kids]
            n.links += [(a + "/", "", "a"), ("/", "", "a")]
            if i % 5 == 1:
                n.links.append(("/private/b%d.html" % i, "", "a"))
                self.html("%s/private/b%d.html" % (b, i), "Bee secret")
        self.add(a + "/archive.zip", Node("res", ctype="application/zip", body=self.zip,
                                          headers=[("ETag", '"zip-1"')]))
        self.add(a + "/loop/a", Node("redirect", location="/loop/b"))
        self.add(a + "/loop/b", Node("redirect", location="/loop/a"))
        for i in range(8):
            self.add("%s/chain/%d" % (a, i), Node("redirect", location="/chain/%d" % (i + 1)))
        self.html(a + "/chain/8", "Chain end")

    def _page(self, k, j, kids):
        a = self.a
        url = self.page_url(k, j)
        n = self.html(url, "Page %d %d" % (k, j))
        n.words = "page words layer%d item%d%s" % (k, j, " hub" if k == 1 else "")
        rng = self.rng
        links = []
        base_next = k >= 2 and j % 13 == 5 and kids
        if base_next:
            # every link of this page resolves against the next folder
            n.base = "../%d/" % (k + 1) if j % 2 else "/s/%d/" % (k + 1)
        for ck, cj, via in kids:
            if via == "redirect":
                self.add("%s/r/%d/%d" % (a, ck, cj),
                         Node("redirect", location="/s/%d/%d.html" % (ck, cj)))
                href = "/r/%d/%d" % (ck, cj)
            elif via == "redirect2":
                self.add("%s/r2/%d/%d" % (a, ck, cj),
                         Node("redirect", location="%s/r/%d/%d" % (a, ck, cj)))
                self.add("%s/r/%d/%d" % (a, ck, cj),
                         Node("redirect", location="../../s/%d/%d.html" % (ck, cj)))
                href = "/r2/%d/%d" % (ck, cj)
            elif base_next:
                href = "%d.html" % cj if cj % 2 else "%d.html#b" % cj
            else:
                href = self.child_href(k, j, ck, cj, rng.randrange(8))
            tag = "iframe" if cj % 31 == 7 else "area" if cj % 37 == 9 else "a"
            links.append((href, "", tag))
        if k == 0:
            links += [("/deep/0.html", "", "a"), (self.b + "/", "", "a"),
                      ("https://example.invalid/", "", "a")]
        else:
            # cycles: back to the start and to a hub (visited first)
            links += [("/", "", "a"), ("/h/%d.html" % rng.randrange(HUBS), "", "a")]
            if not base_next:
                links += [("", "", "a"), ("#top", "", "a")]  # the page itself
            # the page's own URL (a canonical URL elsewhere on the host
            # would make the page that URL's document)
            links.append((self.page_url(k, j)[len(self.a):], "canonical", "link"))
        if 2 <= k <= 10:
            self._extras(k, j, links)
        n.nofollow = k >= 2 and j % 61 == 17
        if n.nofollow:
            links.append(("/metanf/%d-%d.html" % (k, j), "", "a"))
            self.html("%s/metanf/%d-%d.html" % (a, k, j), "Not followed")
        n.links = links

    def _extras(self, k, j, links):
        a = self.a
        tag = "%d-%d" % (k, j)
        if j % 50 == 9:
            p = "/private/%s.html" % tag
            links.append((p if j % 100 == 9 else "../../private/%s.html" % tag, "", "a"))
            self.html(a + p, "Secret")
        if j % 45 == 4:
            links.append(("/nofollow/%s.html" % tag, "nofollow", "a"))
            self.html("%s/nofollow/%s.html" % (a, tag), "Nofollow")
        if j % 10 == 3:
            links += [("/never/%s.png" % tag, "", "img"), ("/never/%s.js" % tag, "", "script"),
                      ("/never/%s.css" % tag, "stylesheet", "link")]
        if j % 40 == 7:
            links.append(("/files/%s.txt" % tag, "", "a"))
            self.add("%s/files/%s.txt" % (a, tag), Node(
                "res", ctype="text/plain", body=("text resource %s mike\n" % tag).encode(),
                headers=[("Last-Modified", LASTMOD)]))
        if j % 40 == 17:
            links.append(("/files/%s.csv" % tag, "", "a"))
            self.add("%s/files/%s.csv" % (a, tag), Node(
                "res", ctype="text/csv", body=("a,b\n%s,november\n" % tag).encode()))
        if j % 40 == 27:
            links.append(("/img/%s.png" % tag, "", "a"))
            self.add("%s/img/%s.png" % (a, tag), Node(
                "res", ctype="image/png", headers=[("ETag", '"png-%s"' % tag)],
                body=b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4))
        if j % 90 == 5:
            links.append(("/big/%s.html" % tag, "", "a"))
            self.add("%s/big/%s.html" % (a, tag), Node("big"))
        if j % 97 == 3:
            links.append(("/missing/%s.html" % tag, "", "a"))
        if k == 2 and j == 1:
            links += [("/loop/a", "", "a"), ("/chain/0", "", "a"),
                      ("/archive.zip", "", "a")]

    def render(self, url, n):
        """(status, content type, body, headers) of node @n."""
        if n.kind == "redirect":
            return 301, "text/html", b"", [("Location", n.location)]
        if n.kind == "big":
            body = b"<html><body>" + b"big " * (self.max_size // 4 + 4096) + b"</body></html>"
            return 200, "text/html", body, []
        if n.kind == "res":
            return 200, n.ctype, n.body, n.headers
        head = "<title>%s</title>" % n.title
        if n.base:
            head += '<base href="%s">' % n.base
        if n.nofollow:
            head += '<meta name="robots" content="nofollow">'
        parts = []
        for href, rel, tag in n.links:
            if tag == "link":
                head += '<link rel="%s" href="%s">' % (rel, href)
            elif tag == "img":
                parts.append('<img src="%s">' % href)
            elif tag == "script":
                parts.append('<script src="%s"></script>' % href)
            elif tag == "iframe":
                parts.append('<iframe src="%s"></iframe>' % href)
            elif tag == "area":
                parts.append('<map name="m"><area href="%s"></map>' % href)
            elif rel:
                parts.append('<a rel="%s" href="%s">l</a>' % (rel, href))
            else:
                parts.append('<a href="%s">l</a>' % href)
        body = "<html><head>%s</head><body><p>%s</p>%s</body></html>" % (
            head, n.words, "\n".join(parts))
        return 200, n.ctype, body.encode(), []

    # -- the crawl the plan expects
    def robots_allows(self, url):
        return not urlsplit(url).path.startswith("/private/")

    def out_links(self, url, n):
        base = urljoin(url, n.base) if n.base else url
        for href, rel, tag in n.links:
            if tag in ("img", "script") or rel in ("nofollow", "stylesheet"):
                continue
            yield norm(urljoin(base, href.strip()))

    def plan(self, max_depth, max_redirects):
        allowed = (self.a + "/", self.b + "/")
        requests = {}
        expected = set()
        depth = {}
        seen = {norm(self.a + "/")}
        queue = [(norm(self.a + "/"), 0, 0)]
        hosts = set()
        while queue:
            nxt = []
            for url, d, hops in queue:
                depth[url] = d
                if d > max_depth or not self.robots_allows(url):
                    continue
                host = url[:url.index("/", len("http://"))]
                if host not in hosts:
                    hosts.add(host)
                    requests[host + "/robots.txt"] = 1
                requests[url] = requests.get(url, 0) + 1
                n = self.nodes.get(url)
                if n is None or n.kind == "big":
                    continue
                if n.kind == "redirect":
                    t = norm(urljoin(url, n.location))
                    if hops < max_redirects and t not in seen:
                        seen.add(t)
                        queue.append((t, d, hops + 1))  # same depth, now
                    continue
                expected.add(url)
                if n.kind == "res":
                    if any(h[0] in ("ETag", "Last-Modified") for h in n.headers):
                        requests[url] += 1  # the webFetcher gets the content
                    continue
                if n.nofollow:
                    continue
                for t in self.out_links(url, n):
                    if t.startswith(allowed) and t not in seen and t != url:
                        seen.add(t)
                        nxt.append((t, d + 1, 0))
            queue = nxt
        per_host = {"A": {}, "B": {}}
        for url, c in requests.items():
            h = "A" if url.startswith(self.a + "/") else "B"
            per_host[h][url[len(self.a if h == "A" else self.b):]] = c
        never = {"A": [], "B": []}
        for url, n in self.nodes.items():
            if url not in requests:
                h = "A" if url.startswith(self.a + "/") else "B"
                never[h].append(url[len(self.a if h == "A" else self.b):])
        return {"expected": sorted(expected), "requests": per_host,
                "depth": depth, "never": never, "zip": self.a + "/archive.zip",
                "zipElements": [self.a + "/archive.zip!/" + e
                                for e in ("dir/inner.html", "inner.txt")],
                "maxDepth": max_depth}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def do_GET(self):
        t0 = time.monotonic()
        srv = self.server
        status = 404
        try:
            path = self.path
            n = srv.model.nodes.get(norm(srv.origin + path))
            if n is None or norm(srv.origin + path) != srv.origin + path:
                status, ctype, body, headers = 404, "text/plain", b"not found", []
            else:
                status, ctype, body, headers = srv.model.render(srv.origin + path, n)
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            for k, v in headers:
                self.send_header(k, v)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)
        finally:
            with srv.lock:
                srv.log.write("%.6f %.6f %d %s\n" % (t0, time.monotonic(), status, self.path))

    do_HEAD = do_GET


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # a crawler that cuts a transfer short resets the connection


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log-a", required=True)
    ap.add_argument("--log-b", required=True)
    ap.add_argument("--plan", required=True)
    ap.add_argument("--pages", type=int, default=3500)
    ap.add_argument("--seed", type=int, default=6)
    ap.add_argument("--max-depth", type=int, default=12)
    ap.add_argument("--max-size", type=int, default=262144)
    ap.add_argument("--max-redirects", type=int, default=5)
    args = ap.parse_args()
    sa = Server(("127.0.0.1", 0), Handler)
    sb = Server(("127.0.0.1", 0), Handler)
    a = "http://127.0.0.1:%d" % sa.server_address[1]
    b = "http://127.0.0.1:%d" % sb.server_address[1]
    model = Model(a, b, args.pages, args.seed, args.max_size)
    with open(args.plan, "w") as f:
        json.dump(model.plan(args.max_depth, args.max_redirects), f)
    for srv, origin, log in ((sa, a, args.log_a), (sb, b, args.log_b)):
        srv.model, srv.origin = model, origin
        srv.log = open(log, "a", buffering=1)
        srv.lock = threading.Lock()
    threading.Thread(target=sb.serve_forever, daemon=True).start()
    with open(args.port_file + ".tmp", "w") as f:
        f.write("%d %d\n" % (sa.server_address[1], sb.server_address[1]))
    os.rename(args.port_file + ".tmp", args.port_file)
    sa.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
