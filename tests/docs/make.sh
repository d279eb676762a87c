#!/bin/sh
# Regenerates the test documents of this folder from sample.md and
# sample.csv with the tools people make such documents with: pandoc
# (docx, odt, pptx, epub, html, rtf), LibreOffice headless (pdf and doc
# from the docx, xlsx, ods and xls from the csv, odp from the pptx), gzip,
# and Python's email and mailbox modules (make_mail.py: eml, mbox).  The results are committed, so `make test` needs none of these
# tools; run this only to change the documents:
#   apt-get install pandoc libreoffice-writer-nogui libreoffice-calc-nogui \
#       libreoffice-impress-nogui
#   tests/docs/make.sh
# Every document holds the sentence "The quick sluice gate opens at dawn"
# (the csv's and the spreadsheets' in a cell); the text ones also carry
# title "Sluice Sample Report", author "Ada Lovelace" and date 2024-03-15.
set -eu
cd "$(dirname "$0")"
out=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export HOME="$work/home" # LibreOffice's profile, thrown away
mkdir -p "$HOME"
cp sample.md sample.csv "$work/"
cd "$work"
for f in docx odt pptx epub; do
    pandoc sample.md -o "sample.$f"
done
pandoc -s sample.md -o sample.html
pandoc -s sample.md -o sample.rtf
lo() {
    timeout 120 soffice --headless --norestore --convert-to "$1" "$2" >/dev/null 2>&1
}
lo pdf sample.docx
lo doc sample.docx
lo xlsx sample.csv
lo ods sample.csv
lo xls sample.csv
lo odp sample.pptx
gzip -9n <sample.md >sample.md.gz
for f in docx odt pptx epub html rtf pdf doc xlsx ods xls odp md.gz; do
    cp "sample.$f" "$out/"
done
python3 "$out/make_mail.py" # sample.eml, sample.mbox (attaches sample.pdf)
echo "tests/docs: $(ls "$out" | wc -l) files"
