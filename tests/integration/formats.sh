#!/bin/bash
# The documents people keep, out of the box (issue 27): the test documents
# of tests/docs (made by pandoc and LibreOffice) crawled from disk with the
# default configuration.
# 1. PDF (pdftotext), Word 97 .doc and RTF (catdoc), Excel .xls
#    (xls2csv), PowerPoint 97 .ppt (ppt-dump.py), HTML, Markdown, a gzip'd
#    Markdown file, DOCX, XLSX, PPTX, ODT, ODS, ODP and EPUB (in-process):
#    each document's text holds the sample sentence, its mimeType is the
#    format's, a search finds them, and the metadata of the office
#    documents (the legacy ones' by exiftool), EPUB and e-mail (author,
#    created, pageCount) is searchable (author:) and in the hits;
# 2. a PDF named .txt is still read as a PDF (the content decides);
# 3. e-mail: sample.eml is a document (its plain text, its subject as the
#    title) whose attachments are documents below it (the PDF read by
#    pdftotext); each message of sample.mbox is a document "<mbox>!/<n>"
#    (ISO-8859-1 read as such), an attached zip's member and a forwarded
#    message's attachment are documents too;
# 4. a converter whose program is not installed: the server warns once at
#    start naming the type and the package, the documents of that type
#    count converter.missing, the run SUCCEEDS and the others have text.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"

DOCS=$(cd "$(dirname "$0")/../docs" && pwd)
SENTENCE="The quick sluice gate opens at dawn"

# expect_doc ID MIME: ID is indexed with that mimeType and the sentence.
expect_doc() {
    curl -sS -o "$TMP/doc.json" "$BASE/smila/index/default/$(jq -rn --arg id "$1" '$id|@uri')"
    if jq -e --arg m "$2" --arg w "$SENTENCE" '.mimeType == $m and (.text | contains($w))' \
        "$TMP/doc.json" >/dev/null 2>&1; then
        ok "$(basename "$1"): $2 with its text"
    else
        fail "$1 ($2): $(head -c 400 "$TMP/doc.json")"
    fi
}

# textex NAME: the textExtractor's counter NAME in the current indexUpdate run.
textex() {
    local cur
    cur=$(curl -sS "$BASE/smila/jobmanager/jobs/indexUpdate/" | jq -r .runs.current)
    curl -sS "$BASE/smila/jobmanager/jobs/indexUpdate/$cur/" |
        jq --arg n "$1" '[.worker | to_entries[] | select(.key | endswith("_textExtractor"))
            | .value[$n] // 0] | add // 0'
}

T="$TMP/tree"
mkdir -p "$T"
T=$(realpath "$T")
cp "$DOCS"/sample.pdf "$DOCS"/sample.doc "$DOCS"/sample.rtf "$DOCS"/sample.xls \
    "$DOCS"/sample.ppt "$DOCS"/sample.html "$DOCS"/sample.md "$DOCS"/sample.md.gz "$T/"
cp "$DOCS/sample.pdf" "$T/report.txt"
cp "$DOCS/sample.eml" "$DOCS/sample.mbox" "$T/"
for f in docx xlsx pptx odt ods odp epub; do
    cp "$DOCS/sample.$f" "$T/"
done

# expect_text ID WORDS [MIME]: ID is indexed, its text holds WORDS (and its
# mimeType is MIME).
expect_text() {
    curl -sS -o "$TMP/doc.json" "$BASE/smila/index/default/$(jq -rn --arg id "$1" '$id|@uri')"
    if jq -e --arg w "$2" --arg m "${3:-}" '(.text | contains($w)) and ($m == "" or .mimeType == $m)' \
        "$TMP/doc.json" >/dev/null 2>&1; then
        ok "${1#"$T"/}: ${3:+$3, }its text"
    else
        fail "$1: $(head -c 400 "$TMP/doc.json")"
    fi
}

# ---- 1, 2: the default converters
import_config "$TMP/config.json"
start_server --config "$TMP/config.json" --data-dir "$TMP/data"
if grep -q "is not installed" "$TMP/server.log"; then
    fail "a default converter is missing: $(grep 'is not installed' "$TMP/server.log")"
else
    ok "every default converter is installed (no warning at start)"
fi
define_crawl docs "$T" docs
if crawl docs; then ok "crawl SUCCEEDED"; else fail "crawl: $(cat "$TMP/crawl.err")"; fi
# The .ppt is crawled from disk like the others: LibreOffice writes a
# ~430 KiB preview bitmap before the OLE2 directory, so libmagic on the
# first 64 KiB only says application/x-ole-storage, the container; the
# extension names the document in it (text/mime.c).  A copy is also
# pushed with its type, as a web server or a client gives it.
req POST /smila/job/indexUpdate/record \
    -F 'record={"_recordid": "pushed/sample.ppt", "mimeType": "application/vnd.ms-powerpoint", "fileName": "sample.ppt", "fileExtension": "ppt"};type=application/json' \
    -F "fileContent=@$DOCS/sample.ppt"
[ "$STATUS" = 202 ] && ok "sample.ppt pushed with its type" || fail "push sample.ppt: $STATUS $(cat "$BODY")"
wait_indexed
expect_doc "$T/sample.pdf" application/pdf
jq -e '.title == "Sluice Sample Report" and .author == "Ada Lovelace" and .pageCount == 1 and
       (.created | test("^20[0-9][0-9]-[0-9][0-9]-[0-9][0-9]T"))' "$TMP/doc.json" >/dev/null &&
    ok "sample.pdf: title, author, created and page count from pdfinfo" ||
    fail "sample.pdf metadata: $(jq -c '{title, author, created, pageCount}' "$TMP/doc.json")"
# legacy_meta FILE PAGES ZONE: the metadata exiftool read of the legacy
# FILE: title, author, created and modified dates (ending in ZONE: Z for
# an OLE2 FILETIME, UTC; nothing for RTF's local times), pageCount PAGES
# (null: the format or the writer has none).
legacy_meta() {
    jq -e --argjson p "$2" --arg z "$3" '.title == "Sluice Sample Report" and .author == "Ada Lovelace" and
           (.created | test("^20[0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]" + $z + "$")) and
           .pageCount == $p' "$TMP/doc.json" >/dev/null &&
        ok "$1: title, author, created$([ "$2" = null ] || echo ", pageCount $2") from exiftool" ||
        fail "$1 metadata: $(jq -c '{title, author, created, modified, pageCount}' "$TMP/doc.json")"
}
expect_doc "$T/sample.doc" application/msword
legacy_meta sample.doc 1 Z
jq -e '.modified | test("^20[0-9][0-9]-")' "$TMP/doc.json" >/dev/null &&
    ok "sample.doc: modified from exiftool" || fail "sample.doc modified: $(jq -c .modified "$TMP/doc.json")"
expect_doc "$T/sample.rtf" text/rtf
legacy_meta sample.rtf null ""
expect_doc "$T/sample.xls" application/vnd.ms-excel
# make.sh gave the .xls its creation date; it was never saved again, so
# its modification date is a zero FILETIME: no date rather than "0"
legacy_meta sample.xls null Z
jq -e '.created == "2024-03-15T10:00:00Z" and (has("modified") | not)' "$TMP/doc.json" >/dev/null &&
    ok "sample.xls: created as made, the unset modification date left out" ||
    fail "sample.xls dates: $(jq -c '{created, modified}' "$TMP/doc.json")"
expect_doc pushed/sample.ppt application/vnd.ms-powerpoint
legacy_meta "sample.ppt (pushed)" null Z
expect_doc "$T/sample.ppt" application/vnd.ms-powerpoint
legacy_meta sample.ppt null Z
jq -e '.text | contains("Herons gather near the northern pier") and contains("Osprey")' "$TMP/doc.json" >/dev/null &&
    ok "sample.ppt: the text of every slide, the table's cells too" ||
    fail "sample.ppt text: $(jq -c .text "$TMP/doc.json" | head -c 400)"
expect_doc "$T/sample.html" text/html
expect_doc "$T/sample.md" text/plain
expect_doc "$T/sample.md.gz" text/plain
expect_doc "$T/report.txt" application/pdf
jq -e '.text | contains("Café crème, naïve façade, Straße, 東京")' "$TMP/doc.json" >/dev/null &&
    ok "the PDF's non-ASCII text is UTF-8" || fail "report.txt text: $(jq -c .text "$TMP/doc.json" | head -c 300)"
expect_doc "$T/sample.docx" application/vnd.openxmlformats-officedocument.wordprocessingml.document
jq -e '.title == "Sluice Sample Report" and .author == "Ada Lovelace" and .pageCount == 1' \
    "$TMP/doc.json" >/dev/null && ok "sample.docx: title, author and page count from its metadata" ||
    fail "sample.docx metadata: $(jq -c '{title, author, created, pageCount}' "$TMP/doc.json")"
expect_doc "$T/sample.xlsx" application/vnd.openxmlformats-officedocument.spreadsheetml.sheet
expect_doc "$T/sample.pptx" application/vnd.openxmlformats-officedocument.presentationml.presentation
expect_doc "$T/sample.odt" application/vnd.oasis.opendocument.text
expect_doc "$T/sample.ods" application/vnd.oasis.opendocument.spreadsheet
expect_doc "$T/sample.odp" application/vnd.oasis.opendocument.presentation
expect_doc "$T/sample.epub" application/epub+zip
jq -e '.created == "2024-03-15" and .author == "Ada Lovelace"' "$TMP/doc.json" >/dev/null &&
    ok "sample.epub: author and date from its package document" ||
    fail "sample.epub metadata: $(jq -c '{title, author, created}' "$TMP/doc.json")"
expect_text "$T/sample.eml" "The quick sluice gate opens at dawn" message/rfc822
jq -e '.title == "Sluice Sample Report" and (.text | contains("<p>") | not) and
       .author == "Ada Lovelace <ada@example.org>" and .created == "2024-03-15T10:00:00Z"' \
    "$TMP/doc.json" >/dev/null &&
    ok "sample.eml: the subject is the title, the sender the author, the date created, the plain alternative the text" ||
    fail "sample.eml: $(jq -c '{title, text}' "$TMP/doc.json" | head -c 300)"
expect_text "$T/sample.eml!/report.pdf" "The quick sluice gate opens at dawn" application/pdf
expect_text "$T/sample.eml!/notes.txt" "kestrel moored at pier four"
expect_text "$T/sample.mbox!/1" "The gate schedule is unchanged" message/rfc822
expect_text "$T/sample.mbox!/2" "Café am Hafen ist heiß" message/rfc822
expect_text "$T/sample.mbox!/2!/manifest.zip!/manifest.txt" "osprey carries salt"
expect_text "$T/sample.mbox!/3!/message-1.eml" "The quick sluice gate opens at dawn" message/rfc822
expect_text "$T/sample.mbox!/3!/message-1.eml!/report.pdf" "Herons gather" application/pdf
# the metadata is searchable and comes back in the hits
curl -sS -G -o "$TMP/search.json" "$BASE/smila/index/default/search" \
    --data-urlencode 'q=author:lovelace' --data-urlencode limit=50
jq -e --arg t "$T" '([.hits[]._recordid] | index($t + "/sample.docx") != null) and
       ([.hits[]._recordid] | index($t + "/sample.eml") != null) and
       ([.hits[]._recordid] | index($t + "/sample.doc") != null) and
       ([.hits[]._recordid] | index("pushed/sample.ppt") != null) and
       ([.hits[] | select(._recordid == $t + "/sample.docx") | .author][0] == "Ada Lovelace")' \
    "$TMP/search.json" >/dev/null && ok "author:lovelace finds the DOCX, the e-mail, the .doc and the .ppt, hits carry the author" ||
    fail "author:lovelace: $(jq -c '[.hits[] | {_recordid, author}]' "$TMP/search.json" | head -c 600)"
"$SLUICE" search --server "$BASE" --limit 50 herons >"$TMP/hits" 2>/dev/null || true
n=$(grep -c "" "$TMP/hits")
[ "$n" = 21 ] && ok "a search finds all 21 documents by a word of their text" ||
    fail "search herons: $n hits: $(cut -f2 "$TMP/hits" | paste -sd' ')"
# the short names of type: on the formats as they were indexed
# type_has NAME ID...: q=type:NAME finds every ID and not sample.pdf
type_has() {
    local name=$1 id
    shift
    curl -sS -G -o "$TMP/type.json" "$BASE/smila/index/default/search" \
        --data-urlencode "q=type:$name" --data-urlencode limit=200
    for id in "$@" "!$T/sample.pdf"; do
        jq -e --arg id "${id#!}" --argjson want "$([ "${id#!}" = "$id" ] && echo true || echo false)" \
            '([.hits[]._recordid] | index($id) != null) == $want' "$TMP/type.json" >/dev/null ||
            { fail "type:$name and $id: $(jq -c '[.hits[]._recordid]' "$TMP/type.json" | head -c 600)"; return; }
    done
    ok "type:$name finds $* and not the PDF"
}
type_has doc "$T/sample.doc" "$T/sample.rtf" "$T/sample.docx" "$T/sample.odt"
type_has sheet "$T/sample.xls" "$T/sample.xlsx" "$T/sample.ods"
type_has presentation "$T/sample.ppt" "$T/sample.pptx" "$T/sample.odp"
type_has email "$T/sample.eml" "$T/sample.mbox!/1" "$T/sample.mbox!/3!/message-1.eml"
type_has epub "$T/sample.epub"
[ "$(textex converter.ok)" -ge 5 ] &&
    ok "converter.ok counts the converters that ran ($(textex converter.ok): PDF, .doc, RTF, .xls, .ppt and more)" ||
    fail "converter.ok $(textex converter.ok), fewer than the 5 converted formats"
[ "$(textex converter.failed)" = 0 ] && [ "$(textex converter.missing)" = 0 ] &&
    ok "no converter failed or was missing" ||
    fail "converter.failed $(textex converter.failed), converter.missing $(textex converter.missing)"

# ---- 3b: every format under a name that says nothing (.bin): read by
# what it is (libmagic), metadata included.  Not the .ppt: LibreOffice's
# keeps its OLE2 directory past the first 64 KiB, where only its
# extension or a given type tells (docs/formats.md).
W="$TMP/wrong"
mkdir -p "$W"
W=$(realpath "$W")
for f in pdf doc xls rtf docx xlsx pptx odt ods odp epub; do
    cp "$DOCS/sample.$f" "$W/sample-$f.bin"
done
define_crawl wrong "$W" wrong
if crawl wrong; then ok "crawl of .bin files SUCCEEDED"; else fail "crawl: $(cat "$TMP/crawl.err")"; fi
wait_indexed
for f in pdf:application/pdf doc:application/msword xls:application/vnd.ms-excel rtf:text/rtf \
    docx:application/vnd.openxmlformats-officedocument.wordprocessingml.document \
    xlsx:application/vnd.openxmlformats-officedocument.spreadsheetml.sheet \
    pptx:application/vnd.openxmlformats-officedocument.presentationml.presentation \
    odt:application/vnd.oasis.opendocument.text odp:application/vnd.oasis.opendocument.presentation \
    ods:application/vnd.oasis.opendocument.spreadsheet epub:application/epub+zip; do
    expect_doc "$W/sample-${f%%:*}.bin" "${f#*:}"
done
jq -e '.author == "Ada Lovelace"' "$TMP/doc.json" >/dev/null &&
    ok "sample-epub.bin keeps its metadata" || fail "sample-epub.bin: $(jq -c '{title, author}' "$TMP/doc.json")"
stop_server

# ---- 4: a converter that is not installed
import_config "$TMP/config2.json" \
    '.textExtractor = {converters: {"application/msword": {command: ["sluice-no-such-converter", "{file}"], package: "sluice-test-pkg"}}}'
start_server --config "$TMP/config2.json" --data-dir "$TMP/data2"
grep -q "converter for application/msword: program 'sluice-no-such-converter' is not installed (Debian package sluice-test-pkg)" \
    "$TMP/server.log" && ok "the start warns about the missing converter, naming type and package" ||
    fail "no warning: $(grep -i converter "$TMP/server.log" | head -3)"
[ "$(grep -c "is not installed" "$TMP/server.log")" = 1 ] && ok "once, and only for it" ||
    fail "warnings: $(grep 'is not installed' "$TMP/server.log")"
define_crawl docs2 "$T" docs2
if crawl docs2; then ok "crawl with a missing converter SUCCEEDED"; else fail "crawl: $(cat "$TMP/crawl.err")"; fi
wait_indexed
[ "$(textex converter.missing)" = 1 ] && [ "$(textex converter.failed)" = 0 ] &&
    ok "the .doc counts converter.missing, not converter.failed" ||
    fail "converter.missing $(textex converter.missing), converter.failed $(textex converter.failed)"
expect_doc "$T/sample.pdf" application/pdf
curl -sS -o "$TMP/doc.json" "$BASE/smila/index/default/$(jq -rn --arg id "$T/sample.doc" '$id|@uri')"
jq -e '.mimeType == "application/msword" and .text == ""' "$TMP/doc.json" >/dev/null &&
    ok "the .doc is indexed without text" || fail "sample.doc: $(head -c 300 "$TMP/doc.json")"
finish
