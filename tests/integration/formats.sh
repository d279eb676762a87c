#!/bin/bash
# The documents people keep, out of the box (issue 27): the test documents
# of tests/docs (made by pandoc and LibreOffice) crawled from disk with the
# default configuration.
# 1. PDF (pdftotext), Word 97 .doc and RTF (catdoc), Excel .xls
#    (xls2csv), HTML, Markdown and a gzip'd Markdown file: each document's
#    text holds the sample sentence, its mimeType is the format's, and a
#    search finds them;
# 2. a PDF named .txt is still read as a PDF (the content decides);
# 3. a converter whose program is not installed: the server warns once at
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
    "$DOCS"/sample.html "$DOCS"/sample.md "$DOCS"/sample.md.gz "$T/"
cp "$DOCS/sample.pdf" "$T/report.txt"

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
wait_indexed
expect_doc "$T/sample.pdf" application/pdf
expect_doc "$T/sample.doc" application/msword
expect_doc "$T/sample.rtf" text/rtf
expect_doc "$T/sample.xls" application/vnd.ms-excel
expect_doc "$T/sample.html" text/html
expect_doc "$T/sample.md" text/plain
expect_doc "$T/sample.md.gz" text/plain
expect_doc "$T/report.txt" application/pdf
jq -e '.text | contains("Café crème, naïve façade, Straße, 東京")' "$TMP/doc.json" >/dev/null &&
    ok "the PDF's non-ASCII text is UTF-8" || fail "report.txt text: $(jq -c .text "$TMP/doc.json" | head -c 300)"
"$SLUICE" search --server "$BASE" --limit 50 herons >"$TMP/hits" 2>/dev/null || true
n=$(grep -c "" "$TMP/hits")
[ "$n" = 8 ] && ok "a search finds all 8 documents by a word of their text" ||
    fail "search herons: $n hits: $(cut -f2 "$TMP/hits" | paste -sd' ')"
[ "$(textex converter.failed)" = 0 ] && [ "$(textex converter.missing)" = 0 ] &&
    ok "no converter failed or was missing" ||
    fail "converter.failed $(textex converter.failed), converter.missing $(textex converter.missing)"
stop_server

# ---- 3: a converter that is not installed
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
