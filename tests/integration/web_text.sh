#!/bin/bash
# Web import: the webCrawler's extractText (a page parsed once for its
# links and its text) against the textExtractor, end to end.  One site of
# awkward pages (charsets from the HTTP header, from <meta>, from a byte
# order mark, from neither; a header that contradicts the page; hidden
# script and style; <pre>; entities; no <title>; a URL without an
# extension, which the textExtractor checks with libmagic; XHTML; a page
# of 300 KB that is spooled to a file and parsed in several chunks) is
# crawled twice into one index: as 127.0.0.1 with extractText off (the
# textExtractor extracts from httpContent) and as localhost with it on
# (the record carries the text, the textExtractor passes it on).
# 1. both crawls SUCCEEDED and index the same pages;
# 2. every page's document (text, title, mimeType, charset, every other
#    attribute but the host-bound ones) is the same both ways;
# 3. with extractText the crawler counted the texts, the webFetcher
#    fetched nothing again and the textExtractor passed every record on
#    (records.textGiven);
# 4. a page served as text/html that is not HTML in its first bytes (a
#    NUL byte), and the XHTML page, for which the textExtractor has an
#    external converter configured, keep httpContent: the textExtractor
#    decides for them.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"
. "$(dirname "$0")/web_lib.sh"

py_site <<'PY'
LAT = "caf\u00e9 cr\u00e8me br\u00fbl\u00e9e, na\u00efve fa\u00e7ade"
BIG = "".join("<p>paragraph %d of the long page with words caf\u00e9 %d</p>\n" % (i, i * 7)
              for i in range(5000))
PAGES = {
    "/": ("text/html", "<html><head><title>Home</title></head><body>"
          + " ".join('<a href="%s">%s</a>' % (p, p) for p in [
              "/utf8.html", "/latin1-http.html", "/latin1-meta.html", "/cp1252.html",
              "/bom.html", "/conflict.html", "/noext", "/page.xhtml", "/big.html",
              "/hidden.html", "/binary.html"]) + "</body></html>"),
    "/utf8.html": ("text/html", "<html><head><title> Unicode  \u00e9t\u00e9 </title>"
                   "<style>p {color: red}</style></head><body><h1>Heading</h1>"
                   "<p>caf\u00e9 &amp; cr\u00e8me &eacute;t&eacute; &#x4e2d;&#25991;</p>"
                   "<pre>  keep   these\n   spaces  </pre><ul><li>one</li><li>two</li></ul>"
                   "<script>var x = '<p>not text</p>';</script><div>tail \u4e2d\u6587</div>"
                   "</body></html>"),
    "/latin1-http.html": ("text/html; charset=ISO-8859-1", ("<html><head><title>Latin1 "
                          "header</title></head><body><p>" + LAT + "</p></body></html>").encode("latin-1")),
    "/latin1-meta.html": ("text/html", ('<html><head><meta charset="iso-8859-1"><title>Latin1 '
                          "meta</title></head><body><p>" + LAT + "</p></body></html>").encode("latin-1")),
    "/cp1252.html": ("text/html", ("<html><head><title>Windows</title></head><body><p>"
                     "\u201cquoted\u201d \u2013 " + LAT + " \u20ac 100</p></body></html>").encode("cp1252")),
    "/bom.html": ("text/html; charset=ISO-8859-1", b"\xef\xbb\xbf" + ("<html><head><title>BOM "
                  "\u00e9</title></head><body><p>" + LAT + "</p></body></html>").encode("utf-8")),
    "/conflict.html": ("text/html; charset=windows-1252", ('<html><head><meta charset="utf-8">'
                       "<title>Conflict</title></head><body><p>" + LAT + "</p></body></html>").encode("utf-8")),
    "/noext": ("text/html", "<html><body><p>no title and no extension</p>"
               "<p>second paragraph</p></body></html>"),
    "/page.xhtml": ("application/xhtml+xml", '<?xml version="1.0" encoding="UTF-8"?>'
                    '<html xmlns="http://www.w3.org/1999/xhtml"><head><title>XHTML</title></head>'
                    "<body><p>xhtml text</p><br/><p>after break</p></body></html>"),
    "/big.html": ("text/html", "<html><head><title>Big</title></head><body>"
                  + BIG + '<a href="/utf8.html">back</a></body></html>'),
    "/hidden.html": ("text/html", "<html><head><title>Hidden</title><script>"
                     + "x" * 70000 + "</script></head><body><noscript>ns</noscript>"
                     "<p>visible</p><template>tpl</template><p>end</p></body></html>"),
    "/binary.html": ("text/html", b"<html>\x00\x01\x02<body><p>binary</p></body></html>"),
}
class H(Pages):
    PAGES = PAGES
PY
PORT=${SITE##*:}
LOCAL="http://localhost:$PORT"

# an external converter for XHTML: the crawler leaves such pages to the
# textExtractor, which runs it (a page's text never bypasses one)
start_web_server '.textExtractor = {converters: {"application/xhtml+xml": {command: ["sed", "s/<[^>]*>/ /g"]}}}'

define_web plain "$SITE" textplain '.deltaImportStrategy = "full"'
define_web parsed "$LOCAL" textparsed '.deltaImportStrategy = "full" | .extractText = true'

# ---- 1. both crawls
expect_crawl plain "crawl without extractText SUCCEEDED"
expect_crawl parsed "crawl with extractText SUCCEEDED"
cp "$RUNJSON" "$TMP/parsed.json"
wait_indexed
index_ids "$TMP/ids"
grep "^$SITE/" "$TMP/ids" | sed "s|^$SITE||" >"$TMP/plain.ids"
grep "^$LOCAL/" "$TMP/ids" | sed "s|^$LOCAL||" >"$TMP/parsed.ids"
n=$(wc -l <"$TMP/plain.ids")
[ "$n" = 12 ] && diff -q "$TMP/plain.ids" "$TMP/parsed.ids" >/dev/null &&
    ok "both crawls indexed the same 12 pages" ||
    fail "indexed: $(paste -sd' ' "$TMP/plain.ids") against $(paste -sd' ' "$TMP/parsed.ids")"

# ---- 2. the same documents
# doc BASE PATH: the stored document, without what names the host or the
# data source
doc() {
    curl -sS "$BASE/smila/index/default/$(jq -rn --arg id "$1$2" '$id | @uri')" |
        jq -S 'del(._recordid, .httpUrl, ._source, ._sources, .source, .path, .url, .id, .version, ._version)
               | if .meta then .meta |= del(._recordid, .httpUrl, ._source, .source, ._version) else . end'
}
# ("/" too: the document route drops the trailing '/' of an id and then
# finds it with one)
cp "$TMP/plain.ids" "$TMP/cmp.ids"
same=0
while read -r p; do
    doc "$SITE" "$p" >"$TMP/a.json"
    doc "$LOCAL" "$p" >"$TMP/b.json"
    if [ "$(jq -r '.text // empty' "$TMP/a.json" | wc -c)" -gt 1 ] && diff "$TMP/a.json" "$TMP/b.json" >"$TMP/d"; then
        same=$((same + 1))
    else
        fail "$p differs (or has no text): $(head -c 1500 "$TMP/d")"
    fi
done <"$TMP/cmp.ids"
[ "$same" = "$n" ] && ok "every page's document is the same with and without extractText ($same)"
doc "$LOCAL" /latin1-http.html | jq -e '.text | contains("café crème brûlée")' >/dev/null &&
    doc "$LOCAL" /conflict.html | jq -e '.charset == "WINDOWS-1252"' >/dev/null &&
    doc "$LOCAL" /noext | jq -e '.title == "noext"' >/dev/null &&
    doc "$LOCAL" /big.html | jq -e '.text | contains("paragraph 4999 of the long page")' >/dev/null &&
    ok "a charset from the header is read, it wins over <meta>, a page without <title> is named by its URL, the long page is whole" ||
    fail "documents: $(doc "$LOCAL" /conflict.html | jq -c '{charset, title}')"

# ---- 3. counters
c() { jq "[.worker[] | .[\"$1\"] // 0] | add // 0" "$TMP/parsed.json"; }
[ "$(c records.textExtracted)" = 10 ] &&
    ok "the crawler extracted the text of 10 pages (not the NUL page, not the XHTML page with a converter)" ||
    fail "records.textExtracted: $(c records.textExtracted)"
[ "$(jq '.worker["2_webFetcher"]["links.fetched"] // 0' "$TMP/parsed.json")" = 0 ] &&
    ok "the webFetcher fetched none again" ||
    fail "webFetcher: $(jq -c '.worker["2_webFetcher"]' "$TMP/parsed.json")"
cur=$(curl -sS "$BASE/smila/jobmanager/jobs/indexUpdate/" | jq -r .runs.current)
curl -sS -o "$TMP/upd.json" "$BASE/smila/jobmanager/jobs/indexUpdate/$cur/"
given=$(jq '[.worker[] | .["records.textGiven"] // 0] | add // 0' "$TMP/upd.json")
[ "$given" = 10 ] &&
    ok "the textExtractor passed the crawler's 10 texts on as they were" ||
    fail "records.textGiven $given: $(jq -c .worker "$TMP/upd.json")"

# ---- 4. not HTML in its first bytes
ext=$(jq '[.worker[] | .["records.extracted"] // 0] | add // 0' "$TMP/upd.json")
[ "$ext" = 14 ] && [ "$(c records.crawled)" = 12 ] &&
    doc "$LOCAL" /page.xhtml | jq -e '.text | contains("xhtml text")' >/dev/null &&
    ok "a text/html page with a NUL byte and the XHTML page keep httpContent: the textExtractor extracted them (14 = 12 pages of the first crawl and those two)" ||
    fail "records.extracted $ext, records.crawled $(c records.crawled)"

finish
