#!/bin/bash
# Compressed single files and documents served as octet-stream, as a
# crawl of /usr/share/doc meets them (issue 27), end to end:
# 1. files: README.gz, NEWS.bz2 and HISTORY.xz made by gzip, bzip2 and xz,
#    guide.html.gz (HTML inside) and storage.rst.gz, a reStructuredText
#    file that libarchive's mtree format reads as a list of entries: each
#    is one document with the text inside, typed by it (mimeType) with its
#    contentEncoding; no element id "<file>!/..." anywhere; a tar.gz stays
#    a compound of its members;
# 2. web: the same storage.rst.gz served as application/gzip (which makes
#    it a compound for the webCrawler), a README served as
#    application/octet-stream, and a tar.gz: the .gz is one document with
#    its text (compounds.notArchive, not corrupt), the README has its
#    text, the tar.gz's member is indexed.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"
. "$(dirname "$0")/web_lib.sh"

# doc ID: the stored document of ID in $TMP/doc.json; 0 if indexed.
doc() {
    curl -sS -o "$TMP/doc.json" -w '%{http_code}' \
        "$BASE/smila/index/default/$(jq -rn --arg id "$1" '$id|@uri')" | grep -q 200
}

# expect_doc ID MIME ENCODING WORDS: ID is indexed with that mimeType,
# contentEncoding ("" for none) and a text holding WORDS.
expect_doc() {
    if doc "$1" && jq -e --arg m "$2" --arg e "$3" --arg w "$4" \
        '.mimeType == $m and (.contentEncoding // "") == $e and (.text | contains($w))' \
        "$TMP/doc.json" >/dev/null; then
        ok "$(basename "$1"): $2${3:+, $3}, its text"
    else
        fail "$1: $(head -c 600 "$TMP/doc.json")"
    fi
}

RST='*******
Storage
*******

The store keeps objects in folders.

    >>> import store
    >>> s = store.open()
    send: GET /1.0/ ...
    reply: ...200...
    ...

After that the store is warm.'

import_config "$TMP/config.json"
start_server --config "$TMP/config.json" --data-dir "$TMP/data"

# ---- 1. files
D="$TMP/doc"
mkdir -p "$D/pkg" "$TMP/t"
D=$(realpath "$D")
echo "Sluice reads the readme inside gzip." | gzip -9 >"$D/pkg/README.gz"
echo "News of the bzip2 release." | bzip2 >"$D/pkg/NEWS.bz2"
echo "History compressed with xz." | xz >"$D/pkg/HISTORY.xz"
echo "<html><head><title>Guide</title></head><body><p>Guide inside gzip.</p></body></html>" |
    gzip >"$D/pkg/guide.html.gz"
printf '%s\n' "$RST" >"$TMP/storage.rst"
gzip <"$TMP/storage.rst" >"$D/pkg/storage.rst.gz"
echo "member of the tarball" >"$TMP/t/member.txt"
tar -C "$TMP/t" -czf "$D/pkg/bundle.tar.gz" member.txt
define_crawl docs "$D" docs '{"deltaImportStrategy": "full"}'
if crawl docs; then ok "file crawl SUCCEEDED"; else fail "file crawl: $(cat "$TMP/crawl.err")"; fi
wait_indexed
expect_doc "$D/pkg/README.gz" text/plain gzip "Sluice reads the readme inside gzip."
expect_doc "$D/pkg/NEWS.bz2" text/plain bzip2 "News of the bzip2 release."
expect_doc "$D/pkg/HISTORY.xz" text/plain xz "History compressed with xz."
expect_doc "$D/pkg/guide.html.gz" text/html gzip "Guide inside gzip."
jq -e '.title == "Guide"' "$TMP/doc.json" >/dev/null && ok "guide.html.gz: the title of the HTML inside" ||
    fail "guide.html.gz title: $(jq -c .title "$TMP/doc.json")"
expect_doc "$D/pkg/storage.rst.gz" text/plain gzip "The store keeps objects in folders."
expect_doc "$D/pkg/bundle.tar.gz!/member.txt" text/plain "" "member of the tarball"
snapshot "$TMP/snap1"
n=$(grep -c "" "$TMP/snap1")
grep -q '\.gz!/\|\.bz2!/\|\.xz!/' <(grep -v 'bundle.tar.gz!/member.txt' "$TMP/snap1") &&
    fail "elements of compressed files: $(grep '!/' "$TMP/snap1" | head -3)" ||
    ok "no element of a compressed file, only the tarball's member ($n documents)"
[ "$n" = 7 ] || fail "7 documents expected, $n: $(cut -f1 "$TMP/snap1" | paste -sd' ')"
cur=$(curl -sS "$BASE/smila/jobmanager/jobs/indexUpdate/" | jq -r .runs.current)
curl -sS -o "$TMP/upd.json" "$BASE/smila/jobmanager/jobs/indexUpdate/$cur/"
dec=$(jq '[.worker[] | .["records.decompressed"] // 0] | add // 0' "$TMP/upd.json")
[ "$dec" -ge 5 ] && ok "the textExtractor counted the compressed files (records.decompressed $dec)" ||
    fail "records.decompressed $dec"

# ---- 2. web
py_site "$TMP/storage.rst" <<'PY'
import gzip, io, sys, tarfile
RST = open(sys.argv[2]).read()
tar = io.BytesIO()
with tarfile.open(fileobj=tar, mode="w:gz") as t:
    data = b"member on the web\n"
    info = tarfile.TarInfo("web-member.txt")
    info.size = len(data)
    t.addfile(info, io.BytesIO(data))
PAGES = {
    "/": ("text/html", '<html><body><a href="/doc/README">r</a> <a href="/doc/storage.rst.gz">s</a> '
          '<a href="/doc/pack.tar.gz">t</a></body></html>'),
    "/doc/README": ("application/octet-stream", b"Plain words served as octet-stream.\n"),
    "/doc/storage.rst.gz": ("application/gzip", gzip.compress(RST.encode())),
    "/doc/pack.tar.gz": ("application/gzip", tar.getvalue()),
}
class H(Pages):
    PAGES = PAGES
PY
define_web webdoc "$SITE" webdoc '.deltaImportStrategy = "full"'
expect_crawl webdoc "web crawl SUCCEEDED"
wait_indexed
expect_doc "$SITE/doc/README" text/plain "" "Plain words served as octet-stream."
expect_doc "$SITE/doc/storage.rst.gz" text/plain gzip "After that the store is warm."
expect_doc "$SITE/doc/pack.tar.gz!/web-member.txt" text/plain "" "member on the web"
expect_counter compounds.notArchive = 1 "the .gz served as application/gzip is no archive (not corrupt)"
expect_counter compounds.corrupt = 0 "nothing is counted corrupt"
index_ids "$TMP/ids"
grep -q "storage.rst.gz!/" "$TMP/ids" && fail "elements of storage.rst.gz: $(grep '!/' "$TMP/ids")" ||
    ok "storage.rst.gz has no elements on the web either"
finish
