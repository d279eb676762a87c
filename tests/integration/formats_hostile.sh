#!/bin/bash
# Documents that lie (issue 27): corrupt and truncated files of each
# format, a PDF of deeply nested objects, a mailbox holding a message of
# 10,000 attachments, a gzip bomb, a DOCX zip bomb, an ODT of a billion
# laughs, a converter that never exits (for RTF)
# and one that writes without end (for .doc), crawled with good documents
# beside them:
# 1. the crawl SUCCEEDS and every file is indexed (the broken ones with
#    what could be read, often nothing);
# 2. the good documents keep their text;
# 3. the problems are counted (converter.failed, converter.timeout,
#    records.corrupt or records.truncated), never task errors; the
#    10,000 attachments are documents;
# 4. the server's peak RSS stays under 300 MiB (under ASan: grows by less
#    than 300 MiB).
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"

DOCS=$(cd "$(dirname "$0")/../docs" && pwd)
asan=0
case "$(ldd "$SLUICE")" in *libasan*) asan=1 ;; esac # not grep -q: an early exit breaks ldd's pipe, and pipefail
# ASan keeps 256 MiB of freed memory in quarantine by default, more than
# what is measured here: a small one, so that its RSS says something
[ "$asan" = 0 ] || export ASAN_OPTIONS="${ASAN_OPTIONS:-}:quarantine_size_mb=8:thread_local_quarantine_size_kb=64"

# textex NAME: the textExtractor's counter NAME in the current indexUpdate run.
textex() {
    local cur
    cur=$(curl -sS "$BASE/smila/jobmanager/jobs/indexUpdate/" | jq -r .runs.current)
    curl -sS "$BASE/smila/jobmanager/jobs/indexUpdate/$cur/" |
        jq --arg n "$1" '[.worker | to_entries[] | select(.key | endswith("_textExtractor"))
            | .value[$n] // 0] | add // 0'
}

# half FILE OUT: the first half of FILE.
half() {
    head -c $(($(stat -c %s "$1") / 2)) "$1" >"$2"
}

T="$TMP/tree"
mkdir -p "$T"
T=$(realpath "$T")
cp "$DOCS/sample.pdf" "$DOCS/sample.md" "$T/"
cp "$DOCS/sample.doc" "$T/flood.doc"
for f in pdf doc xls rtf eml mbox md.gz docx xlsx pptx odt ods odp epub; do
    half "$DOCS/sample.$f" "$T/half.$f"
done
# corrupt: the right beginning, then noise
for f in pdf doc xls docx xlsx pptx odt ods odp epub; do
    { head -c 64 "$DOCS/sample.$f"; head -c 20000 /dev/urandom; } >"$T/corrupt.$f"
done
# a PDF whose one object nests arrays 200,000 deep
python3 - "$T/nested.pdf" <<'PY'
import sys
depth = 200000
body = b"[" * depth + b"]" * depth
pdf = (b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R /X " + body +
       b" >>\nendobj\n2 0 obj\n<< /Type /Pages /Kids [] /Count 0 >>\nendobj\n"
       b"trailer\n<< /Root 1 0 R >>\n%%EOF\n")
open(sys.argv[1], "wb").write(pdf)
PY
# a mailbox holding a message of 10,000 attachments
python3 - "$T/many.mbox" <<'PY'
import sys
parts = "".join("--BB\nContent-Type: application/octet-stream\n"
                "Content-Disposition: attachment; filename=f%d.bin\n\nx\n" % i
                for i in range(10000))
open(sys.argv[1], "w").write(
    "From x@example.org Fri Mar 15 10:00:00 2024\nFrom: x@example.org\n"
    "Subject: many parts\nMIME-Version: 1.0\n"
    "Content-Type: multipart/mixed; boundary=BB\n\n"
    "--BB\nContent-Type: text/plain\n\nten thousand attachments\n" + parts + "--BB--\n")
PY
# a DOCX whose document is 200 MiB of white space in a few hundred KiB
# (the container's ratio limit), and an ODT whose content.xml declares a
# billion laughs and an external entity (never expanded)
python3 - "$T/bomb.docx" "$T/laughs.odt" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("[Content_Types].xml", "<Types/>")
    with z.open("word/document.xml", "w") as w:
        w.write(b'<w:document xmlns:w="http://schemas.openxmlformats.org/'
                b'wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>'
                b'The bomb sentence stays.</w:t></w:r></w:p>')
        for _ in range(200):
            w.write(b" " * (1 << 20))
        w.write(b"</w:body></w:document>")
lol = "".join('<!ENTITY l%d "%s">' % (i, ("&l%d;" % (i - 1)) * 10) for i in range(1, 10))
with zipfile.ZipFile(sys.argv[2], "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr(zipfile.ZipInfo("mimetype"), "application/vnd.oasis.opendocument.text")
    z.writestr("content.xml",
        '<?xml version="1.0"?><!DOCTYPE d [<!ENTITY l0 "lol">' + lol +
        '<!ENTITY xx SYSTEM "file:///etc/passwd">]>'
        '<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"'
        ' xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"><office:body><office:text>'
        '<text:p>Before the laughs</text:p><text:p>&l9;&xx;</text:p>'
        '<text:p>After the laughs</text:p></office:text></office:body></office:document-content>')
PY
# 256 MiB of text in 1 MiB of gzip: the text cap, not the memory
{ yes "sluice gate" || true; } | head -c 268435456 | gzip -9 >"$T/bomb.txt.gz"
# a converter that never exits (for RTF) and one that writes without end
# (for .doc), in place of the default ones
import_config "$TMP/config.json" \
    '.textExtractor = {converters: {"text/rtf": {command: ["sleep", "600"], timeoutSeconds: 2},
                                    "application/msword": {command: ["yes", "flood"]}}}'
start_server --config "$TMP/config.json" --data-dir "$TMP/data"
base_rss=$(server_peak_rss_kib)

define_crawl hostile "$T" hostile
if crawl hostile; then ok "the crawl SUCCEEDED"; else fail "crawl: $(cat "$TMP/crawl.err")"; fi
wait_indexed
snapshot "$TMP/snap"
n=$(grep -c "" "$TMP/snap")
want=$(find "$T" -type f | wc -l)
[ "$n" -ge "$want" ] && ok "every file is indexed ($n documents, $want files)" ||
    fail "$n documents for $want files: $(cut -f1 "$TMP/snap" | paste -sd' ' | head -c 600)"

# ---- 2. the good documents
for f in sample.pdf sample.md; do
    curl -sS -o "$TMP/doc.json" "$BASE/smila/index/default/$(jq -rn --arg id "$T/$f" '$id|@uri')"
    jq -e '.text | contains("The quick sluice gate opens at dawn")' "$TMP/doc.json" >/dev/null &&
        ok "$f keeps its text" || fail "$f: $(head -c 300 "$TMP/doc.json")"
done
curl -sS -o "$TMP/doc.json" "$BASE/smila/index/default/$(jq -rn --arg id "$T/many.mbox!/1" '$id|@uri')"
jq -e '.text | contains("ten thousand attachments")' "$TMP/doc.json" >/dev/null &&
    ok "the message of 10,000 attachments keeps its text" || fail "many.mbox!/1: $(head -c 300 "$TMP/doc.json")"

# ---- 3. counted, not errors
failed=$(textex converter.failed)
[ "$failed" -ge 2 ] && ok "broken PDF and .xls files count converter.failed ($failed)" ||
    fail "converter.failed $failed"
[ "$(textex converter.timeout)" = 1 ] && ok "the converter that never exits is killed at its timeout" ||
    fail "converter.timeout $(textex converter.timeout)"
curl -sS -o "$TMP/doc.json" "$BASE/smila/index/default/$(jq -rn --arg id "$T/flood.doc" '$id|@uri')"
jq -e '(.text | length) > 1000000 and (.text | startswith("flood\nflood"))' "$TMP/doc.json" >/dev/null &&
    ok "the converter that writes without end is stopped with a full text" ||
    fail "flood.doc: $(head -c 200 "$TMP/doc.json")"
[ "$(grep -c 'many.mbox!/1!/f' "$TMP/snap")" = 10000 ] &&
    ok "the 10,000 attachments are documents (maxEntries is 100,000)" ||
    fail "attachments indexed: $(grep -c 'many.mbox!/1!/f' "$TMP/snap")"
curl -sS -o "$TMP/doc.json" "$BASE/smila/index/default/$(jq -rn --arg id "$T/bomb.txt.gz" '$id|@uri')"
jq -e '.contentEncoding == "gzip" and (.text | utf8bytelength) <= 4194304 and
       (.text | utf8bytelength) > 4000000' "$TMP/doc.json" >/dev/null &&
    ok "the gzip bomb's text stops at maxTextBytes" ||
    fail "bomb.txt.gz: $(jq -c '{contentEncoding, n: (.text | utf8bytelength)}' "$TMP/doc.json")"
curl -sS -o "$TMP/doc.json" "$BASE/smila/index/default/$(jq -rn --arg id "$T/bomb.docx" '$id|@uri')"
jq -e '.text == "The bomb sentence stays."' "$TMP/doc.json" >/dev/null &&
    ok "the DOCX zip bomb is read up to the container's limit" ||
    fail "bomb.docx: $(jq -c "{mimeType, text: (.text // \"\" | .[0:200])}" "$TMP/doc.json")"
curl -sS -o "$TMP/doc.json" "$BASE/smila/index/default/$(jq -rn --arg id "$T/laughs.odt" '$id|@uri')"
# (libxml2 refuses the declarations: the document is malformed, its text
# what came before them, here nothing)
jq -e '(.text // "" | contains("lol") | not) and (.text // "" | contains("root:") | not) and
       (.text // "" | length < 100)' "$TMP/doc.json" >/dev/null &&
    [ "$(textex records.malformed)" -ge 1 ] &&
    ok "the ODT's billion laughs and external entity are not expanded (records.malformed)" ||
    fail "laughs.odt: $(jq -c "{mimeType, text: (.text // \"\" | .[0:200])}" "$TMP/doc.json")"
[ "$(textex records.truncated)" -ge 3 ] && ok "the cut texts count records.truncated ($(textex records.truncated))" ||
    fail "records.truncated $(textex records.truncated)"
# the truncated .gz and the broken office documents and EPUBs (7 halves,
# 7 corrupt ones: some are not even zips any more and are typed by what
# is left, so at least the halves)
[ "$(textex records.corrupt)" -ge 8 ] && ok "truncated and corrupt containers count records.corrupt ($(textex records.corrupt))" ||
    fail "records.corrupt $(textex records.corrupt)"

# ---- 4. memory
rss=$(server_peak_rss_kib)
echo "# peak RSS: $((base_rss / 1024)) MiB after start, $((rss / 1024)) MiB after the crawl"
if [ "$asan" = 1 ]; then
    [ "$rss" -lt $((base_rss + 300 * 1024)) ] &&
        ok "peak RSS grew by $(((rss - base_rss) / 1024)) MiB under ASan (less than 300)" ||
        fail "peak RSS grew by $(((rss - base_rss) / 1024)) MiB under ASan"
else
    [ "$rss" -lt $((300 * 1024)) ] && ok "peak RSS $((rss / 1024)) MiB < 300 MiB" ||
        fail "peak RSS $((rss / 1024)) MiB"
fi
finish
